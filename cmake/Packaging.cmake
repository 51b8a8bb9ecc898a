# Installation extras and Debian packages.
#
# `cpack -G DEB` in a build folder makes two packages: pipesqueeze-cli (the engine's command line, the presets and
# suites, the manual page and bash completion; Qt's libraries only for report charts in a build with the GUI) and
# pipesqueeze (the desktop app, which depends on the first).
# Library dependencies come from dpkg-shlibdeps. tools/package-deb.sh builds them the way a release should: prefix
# /usr, Release, no source-tree presets.

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

# Packaging and installing never build: CPack's install step would otherwise rebuild everything out of date first,
# including the always-run fuzz and sanitizer sub-builds, while tests use them. Build, then install or package.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pipesqueeze)
set(CPACK_PACKAGE_VENDOR "PipeSqueeze")
set(CPACK_PACKAGE_CONTACT "PipeSqueeze maintainers <maintainers@pipesqueeze.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Lab for communication compression in pipeline-parallel training")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
# The package installs where the build looks: the preset folder is compiled in from the install prefix.
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_COMPONENT_CLI_DISPLAY_NAME "PipeSqueeze command line")
set(CPACK_DEBIAN_CLI_PACKAGE_NAME pipesqueeze-cli)
set(CPACK_COMPONENT_CLI_DESCRIPTION
    "Train, compare and reproduce compression of activations, activation gradients and data-parallel gradients in
pipeline-parallel training (LibTorch), headless. Records runs in an SQLite store and runs claim suites.")
# The data set is read where its package puts it; OpenBLAS makes LibTorch's CPU kernels several times faster (the
# reference BLAS LibTorch would otherwise load is about 7x slower on a CNN step). dpkg-shlibdeps adds the libraries.
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "dataset-fashion-mnist, libopenblas0-pthread")

set(CPACK_COMPONENT_GUI_DISPLAY_NAME "PipeSqueeze desktop lab")
set(CPACK_DEBIAN_GUI_PACKAGE_NAME pipesqueeze)
set(CPACK_COMPONENT_GUI_DESCRIPTION
    "The Qt desktop lab: live charts of loss, per-stage traffic, compression error and gradient histograms,
compression changed mid-run, and runs compared side by side.")
set(CPACK_COMPONENT_GUI_DEPENDS cli)
set(CPACK_DEBIAN_GUI_PACKAGE_SECTION science)

if(PIPESQUEEZE_BUILD_GUI)
  set(CPACK_COMPONENTS_ALL cli gui)
else()
  set(CPACK_COMPONENTS_ALL cli)
endif()
include(CPack)
