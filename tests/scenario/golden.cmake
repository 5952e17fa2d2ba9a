# golden.cmake -- runs the wsim tool once and compares what it printed and its exit status
# with what they must be (cmake -P, one ctest test per call; see CMakeLists.txt here).
#
#   -DWSIM=path        the built tool
#   -DWORKDIR=dir      where it runs (so that file names in the output are relative)
#   -DARGS="..."       its arguments, separated by spaces (none contains a space)
#   -DSTATUS=n         the exit status it must give
#   -DOUT=file         stdout must equal this file (relative to WORKDIR), byte for byte
#   -DERR=file         stderr must equal this file
#   -DOUT_REGEX=re     stdout must match re (when no OUT)
#   -DERR_REGEX=re     stderr must match re (when no ERR)
#   -DEMPTY_OUT=1      stdout must be empty
#   -DACTUAL=dir       where to leave what it printed when it differs (for diff -u)
#
# With WSIM_UPDATE_GOLDEN=1 in the environment, OUT and ERR are rewritten from the run
# instead (then review them with git diff).
separate_arguments(argv UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${WSIM} ${argv}
    WORKING_DIRECTORY ${WORKDIR}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)

set(problems "")
if(NOT "${rc}" STREQUAL "${STATUS}")
    string(APPEND problems "exit status ${rc}, expected ${STATUS}\n")
endif()

# Compares text (stdout or stderr) with a golden file; updates it when asked.
function(compare what text golden)
    set(path ${WORKDIR}/${golden})
    if("$ENV{WSIM_UPDATE_GOLDEN}" STREQUAL "1")
        file(WRITE ${path} "${text}")
        return()
    endif()
    if(NOT EXISTS ${path})
        set(problems "${problems}${golden} does not exist (WSIM_UPDATE_GOLDEN=1 writes it)\n"
            PARENT_SCOPE)
        return()
    endif()
    file(READ ${path} want)
    if(NOT "${text}" STREQUAL "${want}")
        get_filename_component(base ${golden} NAME)
        set(actual ${ACTUAL}/${base}.actual)
        file(WRITE ${actual} "${text}")
        execute_process(COMMAND diff -u ${path} ${actual} OUTPUT_VARIABLE d)
        set(problems "${problems}${what} differs from ${golden}:\n${d}\n" PARENT_SCOPE)
    endif()
endfunction()

# The checks of one stream: what (stdout, stderr), its text, and the names of the options
# that may ask for it: a golden file (OUT, ERR), else a regular expression (OUT_REGEX, ...).
function(check_stream what text golden regex)
    if(DEFINED ${golden})
        compare(${what} "${text}" ${${golden}})
    elseif(DEFINED ${regex})
        if(NOT "${text}" MATCHES "${${regex}}")
            string(APPEND problems "${what} does not match ${${regex}}:\n${text}\n")
        endif()
    endif()
    set(problems "${problems}" PARENT_SCOPE)
endfunction()

check_stream(stdout "${out}" OUT OUT_REGEX)
if(EMPTY_OUT AND NOT "${out}" STREQUAL "")
    string(APPEND problems "stdout should be empty, got:\n${out}\n")
endif()
check_stream(stderr "${err}" ERR ERR_REGEX)

if(NOT problems STREQUAL "")
    # Unformatted (a plain message keeps the diff's lines as they are), then the failure.
    message("wsim ${ARGS} (in ${WORKDIR}):\n${problems}--- stderr ---\n${err}")
    message(FATAL_ERROR "the output of wsim ${ARGS} is not the golden one")
endif()
