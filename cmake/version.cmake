# The version gb10tune reports: the project's version, and where the source is a git checkout,
# `git describe` of it at configure time ("-dirty" with local changes): a tag ("v0.2.0-3-gabc1234")
# gives the version itself, a checkout without tags "PROJECT_VERSION+gabc1234".
# Sets GB10TUNE_GIT_DESCRIBE ("" outside a checkout or without git) and GB10TUNE_VERSION_FULL.
find_package(Git QUIET)

# `git describe ARGS…` of the source tree into OUT; "" when it fails.
function(gb10tune_git_describe out)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} describe ${ARGN}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE described
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    set(described "")
  endif()
  set(${out} "${described}" PARENT_SCOPE)
endfunction()

set(GB10TUNE_GIT_DESCRIBE "")
set(GB10TUNE_VERSION_FULL ${PROJECT_VERSION})
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  gb10tune_git_describe(GB10TUNE_GIT_DESCRIBE --tags --dirty)
  if(NOT GB10TUNE_GIT_DESCRIBE STREQUAL "")
    string(REGEX REPLACE "^v" "" GB10TUNE_VERSION_FULL ${GB10TUNE_GIT_DESCRIBE})
  else()
    gb10tune_git_describe(GB10TUNE_GIT_DESCRIBE --always --dirty)
    if(NOT GB10TUNE_GIT_DESCRIBE STREQUAL "")
      set(GB10TUNE_VERSION_FULL "${PROJECT_VERSION}+g${GB10TUNE_GIT_DESCRIBE}")
    endif()
  endif()
endif()
message(STATUS "gb10tune: version ${GB10TUNE_VERSION_FULL}")
