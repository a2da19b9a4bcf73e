# kbench_library(NAME SOURCES... [DEPENDS targets...]): one static library per src/ folder,
# named kbench_<folder>. Every library is position-independent because the Python extension
# (src/worker) links some of them into a shared module.
function(kbench_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(kbench_${name} STATIC ${ARG_SOURCES})
  target_link_libraries(kbench_${name} PUBLIC ${ARG_DEPENDS})
  set_target_properties(kbench_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# kbench_forbid_links(TARGET targets...): fails the configuration when TARGET links, directly or
# through another library, any of the listed targets. The sandboxed processes (kbench-worker and
# the Python extension run candidate code) must not carry the front ends' network, database and
# queue clients; this makes that a build error rather than a review comment.
function(kbench_forbid_links target)
  set(seen "")
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue current)
    if(current IN_LIST seen OR NOT TARGET ${current})
      continue()
    endif()
    list(APPEND seen ${current})
    get_target_property(links ${current} LINK_LIBRARIES)
    get_target_property(interface_links ${current} INTERFACE_LINK_LIBRARIES)
    foreach(link IN LISTS links interface_links)
      if(link MATCHES "^\\$<" OR link STREQUAL "links-NOTFOUND" OR link STREQUAL "interface_links-NOTFOUND")
        continue()
      endif()
      if(link IN_LIST ARGN)
        message(FATAL_ERROR "${target} links ${link} (through ${current}); the sandboxed "
          "processes must not link the front ends' libraries (cmake/kbench_library.cmake)")
      endif()
      list(APPEND queue ${link})
    endforeach()
  endwhile()
endfunction()
