# The version gb10tune reports: the project's version, and where the source is a git checkout,
# `git describe` of it at configure time ("-dirty" with local changes): a tag ("v0.2.0-3-gabc1234")
# gives the version itself, a checkout without tags "PROJECT_VERSION+gabc1234".
# Sets GB10TUNE_GIT_DESCRIBE ("" outside a checkout or without git) and GB10TUNE_VERSION_FULL.
find_package(Git QUIET)
set(GB10TUNE_GIT_DESCRIBE "")
set(GB10TUNE_VERSION_FULL ${PROJECT_VERSION})
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} describe --tags --dirty
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE git_tag_describe
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE git_tag_result)
  if(git_tag_result EQUAL 0 AND NOT git_tag_describe STREQUAL "")
    set(GB10TUNE_GIT_DESCRIBE ${git_tag_describe})
    string(REGEX REPLACE "^v" "" GB10TUNE_VERSION_FULL ${git_tag_describe})
  else()
    execute_process(
      COMMAND ${GIT_EXECUTABLE} describe --always --dirty
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE git_commit_describe
      OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET
      RESULT_VARIABLE git_commit_result)
    if(git_commit_result EQUAL 0 AND NOT git_commit_describe STREQUAL "")
      set(GB10TUNE_GIT_DESCRIBE ${git_commit_describe})
      set(GB10TUNE_VERSION_FULL "${PROJECT_VERSION}+g${git_commit_describe}")
    endif()
  endif()
endif()
message(STATUS "gb10tune: version ${GB10TUNE_VERSION_FULL}")
