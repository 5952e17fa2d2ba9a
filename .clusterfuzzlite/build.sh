#!/bin/bash -eu
# ClusterFuzzLite (and OSS-Fuzz) build script: builds every libFuzzer target of fuzz/ and
# puts it in $OUT with its seed corpus (NAME_seed_corpus.zip) and dictionary (NAME.dict).
#
# It runs inside the builder image (Dockerfile here) from the repository's copy ($SRC/wsim,
# the working directory), with the service's variables: $CC (clang), $CFLAGS (the
# sanitizer of the job and -fsanitize=fuzzer-no-link, which instrument every library),
# $LIB_FUZZING_ENGINE (the engine's link flags), $OUT, $WORK.  tests/fuzz/test_cfl_build.sh
# runs it locally with those variables set as the service sets them.
#
# hiredis (behind libwsim) is linked statically: the images that run the fuzzers do not
# have it.  pkg_check_modules keeps the library it found in the cache variable
# pkgcfg_lib_HIREDIS_hiredis; set beforehand, it is used as it is.

if [ -f "$PWD/fuzz/CMakeLists.txt" ]; then
    src=$PWD
else
    src=$SRC/wsim
fi
build=$WORK/wsim-build
static_hiredis=()
hiredis_a=$(pkg-config --variable=libdir hiredis 2>/dev/null)/libhiredis.a
[ -f "$hiredis_a" ] || hiredis_a=$($CC -print-file-name=libhiredis.a)
if [ -f "$hiredis_a" ]; then
    static_hiredis=(-Dpkgcfg_lib_HIREDIS_hiredis="$hiredis_a")
fi

# No build type: $CFLAGS alone decides the optimisation and the debug information.
cmake -S "$src" -B "$build" \
    -DCMAKE_BUILD_TYPE= \
    -DWSIM_FUZZERS=ON \
    -DWSIM_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
    -DWSIM_WERROR=OFF \
    -DBUILD_TESTING=OFF \
    -DWSIM_REAL_REDIS_TESTS=OFF \
    "${static_hiredis[@]}"
cmake --build "$build" --target fuzzers -j"$(nproc)"

while read -r name; do
    [ -n "$name" ] || continue
    cp "$build/fuzz/$name" "$OUT/$name"
    if [ -d "$src/fuzz/corpus/$name" ]; then
        rm -f "$OUT/${name}_seed_corpus.zip"
        (cd "$src/fuzz/corpus/$name" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
    fi
    if [ -f "$src/fuzz/dict/$name.dict" ]; then
        cp "$src/fuzz/dict/$name.dict" "$OUT/$name.dict"
    fi
done < "$build/fuzz/fuzzers.txt"
