# Installation extras.

# Manual pages are installed gzipped, as Debian expects.
find_program(PIPESQUEEZE_GZIP gzip)
function(pipesqueeze_install_manpage page component)
  set(source ${CMAKE_SOURCE_DIR}/docs/man/${page})
  if(PIPESQUEEZE_GZIP)
    set(packed ${CMAKE_BINARY_DIR}/man/${page}.gz)
    add_custom_command(OUTPUT ${packed}
                       COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
                       COMMAND ${PIPESQUEEZE_GZIP} -9 -n -c ${source} > ${packed}
                       DEPENDS ${source} VERBATIM)
    add_custom_target(pipesqueeze_man_${page} ALL DEPENDS ${packed})
    install(FILES ${packed} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
  else()
    install(FILES ${source} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
  endif()
endfunction()
