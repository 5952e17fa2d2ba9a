# Checks that a docs page shows an example file exactly as it is:
#   cmake -DPAGE=docs/x.md -DEXAMPLE=docs/examples/y.c -P tests/check_doc_example.cmake
# The page holds the file between the lines
#   <!-- BEGIN EXAMPLE docs/examples/y.c -->  ```c  ...  ```  <!-- END EXAMPLE -->
file(READ "${PAGE}" page)
file(READ "${EXAMPLE}" example)
file(RELATIVE_PATH rel "${SOURCE_DIR}" "${EXAMPLE}")
string(FIND "${page}" "<!-- BEGIN EXAMPLE ${rel} -->\n```c\n" begin)
if(begin EQUAL -1)
    message(FATAL_ERROR "${PAGE} does not show ${rel} (no BEGIN EXAMPLE ${rel} marker)")
endif()
string(LENGTH "<!-- BEGIN EXAMPLE ${rel} -->\n```c\n" skip)
math(EXPR start "${begin} + ${skip}")
string(SUBSTRING "${page}" ${start} -1 rest)
string(FIND "${rest}" "```\n<!-- END EXAMPLE -->" end)
if(end EQUAL -1)
    message(FATAL_ERROR "${PAGE}: the example ${rel} has no END EXAMPLE marker")
endif()
string(SUBSTRING "${rest}" 0 ${end} shown)
if(NOT shown STREQUAL example)
    message(FATAL_ERROR "${PAGE} shows an old copy of ${rel}: paste the file between its "
                        "markers again")
endif()
