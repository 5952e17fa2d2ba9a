# fuzz/outcomes.cmake -- fuzz_outcomes: the engine against its reference model
# (fuzz/gen.h, fuzz/model.h), the `wsim repro` library, bench_fuzz and the model's tests.
# Included by fuzz/CMakeLists.txt after wsim_fuzz_target() and the WSIM_FUZZ_* variables
# are defined: with clang and WSIM_FUZZERS=ON it makes the libFuzzer binary fuzz_outcomes,
# and with any compiler fuzz_outcomes_replay (fuzz/driver.c) and the ctest test
# fuzz_regress_fuzz_outcomes over fuzz/corpus/fuzz_outcomes/.

# The generator, the model, the checks and the shrinker (libwsim_fuzzmodel): linked by the
# fuzz target, the replay driver, bench_fuzz, the unit test and the wsim tool.
add_library(wsim_fuzzmodel STATIC ${CMAKE_CURRENT_LIST_DIR}/gen.c
    ${CMAKE_CURRENT_LIST_DIR}/model.c ${CMAKE_CURRENT_LIST_DIR}/repro.c)
target_include_directories(wsim_fuzzmodel PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(wsim_fuzzmodel PUBLIC wsim wscenario PRIVATE wsim_warnings)
if(WSIM_FUZZ_LIBFUZZER)
    # instrumented like the libraries it drives, so the fuzzer sees the model's branches
    target_compile_options(wsim_fuzzmodel PRIVATE ${WSIM_FUZZ_COMPILE_FLAGS})
    target_link_options(wsim_fuzzmodel INTERFACE "$<BUILD_INTERFACE:${WSIM_FUZZ_LINK_FLAGS}>")
endif()

if(COMMAND wsim_fuzz_target)
    wsim_fuzz_target(fuzz_outcomes SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_outcomes.c
        LIBS wsim_fuzzmodel)
elseif(EXISTS ${CMAKE_CURRENT_LIST_DIR}/driver.c)
    # included on its own: the replay executable alone
    add_executable(fuzz_outcomes_replay ${CMAKE_CURRENT_LIST_DIR}/fuzz_outcomes.c
        ${CMAKE_CURRENT_LIST_DIR}/driver.c)
    target_link_libraries(fuzz_outcomes_replay PRIVATE wsim_fuzzmodel wsim_warnings)
endif()

# fuzz_outcomes executions per second on one core (docs/benchmarks.md), run by hand.
add_executable(bench_fuzz ${PROJECT_SOURCE_DIR}/bench/bench_fuzz.c)
target_link_libraries(bench_fuzz PRIVATE wsim_fuzzmodel wsim_warnings)
set_target_properties(bench_fuzz PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)

# The wsim tool's `repro` subcommand (fuzz/repro.h): scenario/ is processed before fuzz/,
# so the tool exists here and gets the library (and its include directory).
if(TARGET wsim-tool)
    target_link_libraries(wsim-tool PRIVATE wsim_fuzzmodel)
endif()

# tests/unit/test_fuzz_model.c is globbed by tests/CMakeLists.txt (processed before fuzz/):
# it needs this library too.
if(TARGET test_fuzz_model)
    target_link_libraries(test_fuzz_model PRIVATE wsim_fuzzmodel)
endif()
