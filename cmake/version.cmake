# Writes OUT, a header defining MINIMODEL_VERSION: `git describe --always
# --dirty --tags` of SRC at build time, or FALLBACK outside a git checkout.
# Run on every build (app/CMakeLists.txt); the header is rewritten only when
# the version changed, so an unchanged tree recompiles nothing.
execute_process(COMMAND git describe --always --dirty --tags
  WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT version)
  set(version "${FALLBACK}")
endif()
set(text "/* Generated at build time by cmake/version.cmake. */\n#define MINIMODEL_VERSION \"${version}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
