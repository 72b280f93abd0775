# MINIMODEL_KEEP_LOADED (set by the asan preset): every executable of the
# build gets tests/sanitizers/keep_loaded.c, a dlclose that unloads nothing,
# so that LeakSanitizer's fast unwinder can name the Open MPI components in
# its stacks (that file says why). Called once, after every directory is
# added: it walks them all.
function(mm_keep_loaded dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/sanitizers/keep_loaded.c)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    mm_keep_loaded(${subdir})
  endforeach()
endfunction()
