# The version gb10tune reports: the project's version, and where the source is a git checkout,
# `git describe` of it at configure time (a tag, or the commit, "-dirty" with local changes).
# Sets GB10TUNE_GIT_DESCRIBE ("" outside a checkout or without git) and GB10TUNE_VERSION_FULL.
find_package(Git QUIET)
set(GB10TUNE_GIT_DESCRIBE "")
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} describe --tags --always --dirty
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE GB10TUNE_GIT_DESCRIBE
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE git_describe_result)
  if(NOT git_describe_result EQUAL 0)
    set(GB10TUNE_GIT_DESCRIBE "")
  endif()
endif()
if(GB10TUNE_GIT_DESCRIBE STREQUAL "")
  set(GB10TUNE_VERSION_FULL ${PROJECT_VERSION})
elseif(GB10TUNE_GIT_DESCRIBE MATCHES "^v?[0-9]")
  string(REGEX REPLACE "^v" "" GB10TUNE_VERSION_FULL ${GB10TUNE_GIT_DESCRIBE})
else()
  set(GB10TUNE_VERSION_FULL "${PROJECT_VERSION}+g${GB10TUNE_GIT_DESCRIBE}")
endif()
message(STATUS "gb10tune: version ${GB10TUNE_VERSION_FULL}")
