# pins.cmake -- turns engine/framework.pins (REPOSITORY PATH COMMIT [# what], one line per
# framework file the engine follows) into C: a static table behind ws_framework_pin_count and
# ws_framework_pin_at (ws_sim.h).  A malformed line stops the configuration with
# "framework.pins:LINE: error: ...".

# Escapes a string for a C string literal.
function(wsim_c_string out text)
    string(REPLACE "\\" "\\\\" text "${text}")
    string(REPLACE "\"" "\\\"" text "${text}")
    set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

function(wsim_framework_pins pins out)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${pins})
    file(READ ${pins} text)
    string(REPLACE ";" "\\;" text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    set(rows "")
    set(number 0)
    foreach(line IN LISTS lines)
        math(EXPR number "${number} + 1")
        string(STRIP "${line}" line)
        if(line STREQUAL "" OR line MATCHES "^#")
            continue()
        endif()
        if(NOT line MATCHES "^([^ #]+) +([^ #]+) +([^ #]+)( +#(.*))?$")
            message(FATAL_ERROR "framework.pins:${number}: error: expected REPOSITORY PATH "
                "COMMIT [# what], got: ${line}")
        endif()
        set(repo "${CMAKE_MATCH_1}")
        set(path "${CMAKE_MATCH_2}")
        set(commit "${CMAKE_MATCH_3}")
        string(STRIP "${CMAKE_MATCH_5}" what)
        if(NOT repo MATCHES "^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
            message(FATAL_ERROR "framework.pins:${number}: error: '${repo}' is not owner/name")
        endif()
        string(LENGTH "${commit}" len)
        if(NOT commit MATCHES "^[0-9a-f]+$" OR len LESS 7 OR len GREATER 40)
            message(FATAL_ERROR "framework.pins:${number}: error: '${commit}' is not a commit "
                "(7 to 40 hex digits)")
        endif()
        wsim_c_string(repo_c "${repo}")
        wsim_c_string(path_c "${path}")
        wsim_c_string(commit_c "${commit}")
        wsim_c_string(what_c "${what}")
        string(APPEND rows "    {${repo_c}, ${path_c}, ${commit_c}, ${what_c}},\n")
    endforeach()
    if(rows STREQUAL "")
        message(FATAL_ERROR "framework.pins:1: error: no pin: the engine follows no framework file")
    endif()
    set(code "/* Generated from engine/framework.pins by engine/pins.cmake: do not edit. */\n")
    string(APPEND code "#include <stddef.h>\n\n#include \"ws_sim.h\"\n\n")
    string(APPEND code "static const ws_framework_pin pins[] = {\n${rows}}")
    string(APPEND code [=[;

size_t ws_framework_pin_count(void) { return sizeof pins / sizeof pins[0]; }

const ws_framework_pin *ws_framework_pin_at(size_t i)
{
    return i < sizeof pins / sizeof pins[0] ? &pins[i] : NULL;
}
]=])
    file(WRITE ${out}.tmp "${code}")
    configure_file(${out}.tmp ${out} COPYONLY)
endfunction()
