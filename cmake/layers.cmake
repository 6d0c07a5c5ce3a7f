# One static library per layer, linking only the layers it may use (docs/architecture.md).
#
# The build enforces the matrix: every layer's headers are reachable only through an include
# directory of its own (build/layers/<name>, holding one link <name> -> src/<name>), which a target
# sees only when it links that layer. An include of a layer that is not a dependency fails to
# compile ("No such file or directory"), so a wrong-way arrow cannot be merged by accident.
#
#   gpudoctor_layer(NAME SOURCES file... [USES layer...] [LIBS target...] [PUBLIC_LIBS target...])
function(gpudoctor_layer name)
  cmake_parse_arguments(L "" "" "SOURCES;USES;LIBS;PUBLIC_LIBS" ${ARGN})
  gpudoctor_layer_include(${name})
  add_library(gpudoctor_${name} STATIC ${L_SOURCES})
  target_include_directories(gpudoctor_${name} PUBLIC ${GPUDOCTOR_LAYER_INCLUDE_${name}})
  foreach(u IN LISTS L_USES)
    if(NOT TARGET gpudoctor_${u})
      message(FATAL_ERROR "layer ${name} uses ${u}, which is not defined before it")
    endif()
    target_link_libraries(gpudoctor_${name} PUBLIC gpudoctor_${u})
  endforeach()
  target_link_libraries(gpudoctor_${name} PUBLIC ${L_PUBLIC_LIBS} PRIVATE ${L_LIBS})
  set_property(GLOBAL APPEND PROPERTY GPUDOCTOR_LAYERS ${name})
endfunction()

# The include directory that exposes src/<name> (and nothing else) as "<name>/...".
function(gpudoctor_layer_include name)
  set(dir ${CMAKE_BINARY_DIR}/layers/${name})
  if(NOT EXISTS ${dir}/${name})
    file(MAKE_DIRECTORY ${dir})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${name} ${dir}/${name} SYMBOLIC)
  endif()
  set(GPUDOCTOR_LAYER_INCLUDE_${name} ${dir} PARENT_SCOPE)
  set(GPUDOCTOR_LAYER_INCLUDE_${name} ${dir} CACHE INTERNAL "")
endfunction()

# A layer's unit tests (paths relative to its folder, or absolute): gathered into gpudoctor_tests.
function(gpudoctor_layer_tests)
  foreach(f IN LISTS ARGN)
    if(NOT IS_ABSOLUTE ${f})
      set(f ${CMAKE_CURRENT_SOURCE_DIR}/${f})
    endif()
    set_property(GLOBAL APPEND PROPERTY GPUDOCTOR_TEST_SOURCES ${f})
  endforeach()
endfunction()
