# Builds the Debian packages of this build folder with CPack and checks what a user would get from them:
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DGUI=ON|OFF -DCUDA=ON|OFF -DPREFIX=... -DCPACK=... -DTORCH_LIBRARY=...
#         -P CheckDebs.cmake
# The command-line package holds the CLI, presets, suites, manual page and completion and needs no Qt; the desktop
# package holds the app and depends on the command-line package of the same version; the extracted CLI runs.
cmake_minimum_required(VERSION 3.25)  # a script: policies (IN_LIST) as the project sets them

function(fail what)
  message(FATAL_ERROR "package check: ${what}")
endfunction()

function(deb_field deb field out)
  execute_process(COMMAND dpkg-deb -f ${deb} ${field} OUTPUT_VARIABLE v RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    fail("dpkg-deb -f ${deb} ${field} failed")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

function(expect_entries deb)
  execute_process(COMMAND dpkg-deb -c ${deb} OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    fail("dpkg-deb -c ${deb} failed")
  endif()
  foreach(entry ${ARGN})
    string(FIND "${listing}" "${entry}" at)
    if(at EQUAL -1)
      fail("${deb} lacks ${entry}; it holds:\n${listing}")
    endif()
  endforeach()
endfunction()

find_program(DPKG_DEB dpkg-deb)
if(NOT DPKG_DEB)
  message("SKIP: dpkg-deb is not installed, so no Debian package can be built here")
  return()
endif()

# The packages name their dependencies by the Debian packages that hold the libraries they load: a build against
# another LibTorch (a pip wheel's, say) makes packages whose LibTorch no package provides.
execute_process(COMMAND dpkg -S ${TORCH_LIBRARY} RESULT_VARIABLE owned OUTPUT_QUIET ERROR_QUIET)
if(NOT owned EQUAL 0)
  message("SKIP: this build's LibTorch (${TORCH_LIBRARY}) comes from no Debian package, so a package built from it "
          "could not depend on it; build the packages against Debian's libtorch-dev")
  return()
endif()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CPACK} -G DEB -B ${WORK_DIR} --config ${BUILD_DIR}/CPackConfig.cmake
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  fail("cpack failed:\n${out}\n${err}")
endif()

file(GLOB cli_deb ${WORK_DIR}/pipesqueeze-cli_*.deb)
list(LENGTH cli_deb n)
if(NOT n EQUAL 1)
  file(GLOB all ${WORK_DIR}/*.deb)
  fail("expected one pipesqueeze-cli_*.deb, found: ${all}")
endif()
deb_field(${cli_deb} Depends cli_depends)
deb_field(${cli_deb} Version version)
foreach(need libtorch libopenblas0-pthread dataset-fashion-mnist libsqlite3)
  if(NOT cli_depends MATCHES "${need}")
    fail("the command-line package does not depend on ${need}: Depends: ${cli_depends}")
  endif()
endforeach()
# Qt only where the CLI draws report charts (a build with the GUI); a GUI-less build's CLI needs no Qt at all.
if(NOT GUI AND cli_depends MATCHES "libqt")
  fail("a build without the GUI made a command-line package that depends on Qt: Depends: ${cli_depends}")
endif()
expect_entries(${cli_deb} /bin/pipesqueeze-cli /share/pipesqueeze/presets/smoke.json
               /share/pipesqueeze/presets/suites/ /share/man/man1/pipesqueeze-cli.1
               /share/bash-completion/completions/pipesqueeze-cli /LICENSE /share/doc/pipesqueeze-cli/copyright)

# Unpacked into a temporary root, the packaged CLI runs from there: it finds its own presets beside it (not the
# source tree's), and trains one into a fresh store.
set(root ${WORK_DIR}/root)
execute_process(COMMAND dpkg-deb -x ${cli_deb} ${root} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  fail("dpkg-deb -x ${cli_deb} failed")
endif()
set(cli ${root}${PREFIX}/bin/pipesqueeze-cli)  # the package installs under the build's prefix
if(NOT EXISTS ${cli})
  fail("the command-line package has no ${PREFIX}/bin/pipesqueeze-cli")
endif()
set(env ${CMAKE_COMMAND} -E env --unset=PIPESQUEEZE_PRESETS --unset=PIPESQUEEZE_STORE XDG_DATA_HOME=${WORK_DIR}/xdg)
execute_process(COMMAND ${env} ${cli} --version OUTPUT_VARIABLE version_line RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT version_line MATCHES "^pipesqueeze-cli .*LibTorch")
  fail("the packaged pipesqueeze-cli --version exited ${rc}: ${version_line}")
endif()
execute_process(COMMAND ${env} ${cli} presets OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
string(REGEX MATCH "\nsmoke +[^\n]*" smoke_line "${listing}")
string(FIND "${smoke_line}" "${root}/" at)
if(at EQUAL -1)
  fail("the packaged CLI does not find its own presets first; pipesqueeze-cli presets says:\n${listing}")
endif()
execute_process(COMMAND ${env} ${cli} train --preset smoke --store ${WORK_DIR}/runs.sqlite --json
                OUTPUT_VARIABLE trained ERROR_VARIABLE trained_err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT trained MATCHES "\"status\":\"finished\"")
  fail("the packaged CLI did not train the smoke preset (exit ${rc}):\n${trained}\n${trained_err}")
endif()

# Every library the packaged programs load directly must come from a Debian package, so that Depends names it.
# A build linked against the CUDA toolkit under /usr/local is the exception, said here: release packages are CPU
# builds (tools/package-deb.sh turns PIPESQUEEZE_CUDA off).
execute_process(COMMAND ldd ${cli} OUTPUT_VARIABLE loaded)
string(REGEX MATCHALL "=> /[^ ]+" paths "${loaded}")
# Each library is looked up as loaded, as its link's target, and under /usr (merged /usr: packages list /usr/lib),
# all in one dpkg query: one query per path took two minutes for the CLI's 300 libraries.
set(libraries)
set(candidates)
foreach(p ${paths})
  string(REPLACE "=> " "" p "${p}")
  get_filename_component(real ${p} REALPATH)
  string(REGEX REPLACE "^/lib/" "/usr/lib/" usr_path "${p}")
  string(REGEX REPLACE "^/lib/" "/usr/lib/" usr_real "${real}")
  list(APPEND libraries ${p})
  list(APPEND candidates ${p} ${real} ${usr_path} ${usr_real})
endforeach()
list(REMOVE_DUPLICATES libraries)
list(REMOVE_DUPLICATES candidates)
set(owned_paths)
if(candidates)
  # Exits non-zero when any path has no package; those are found below by their absence.
  execute_process(COMMAND dpkg-query -S ${candidates} OUTPUT_VARIABLE owners ERROR_QUIET)
  string(REGEX MATCHALL "[^\n]+: /[^\n]+" owner_lines "${owners}")
  foreach(line ${owner_lines})
    string(REGEX REPLACE "^.*: (/.*)$" "\\1" path "${line}")
    list(APPEND owned_paths ${path})
  endforeach()
endif()
foreach(p ${libraries})
  get_filename_component(real ${p} REALPATH)
  set(owned FALSE)
  foreach(candidate ${p} ${real})
    string(REGEX REPLACE "^/lib/" "/usr/lib/" usr_candidate "${candidate}")
    foreach(c ${candidate} ${usr_candidate})
      if(c IN_LIST owned_paths)
        set(owned TRUE)
      endif()
    endforeach()
  endforeach()
  if(NOT owned)
    if(CUDA AND p MATCHES "cuda|nccl")
      message("NOTE: ${p} comes from the CUDA toolkit, not a Debian package; this build's package needs it installed")
    else()
      fail("the packaged CLI loads ${p}, which no Debian package provides, so Depends cannot name it")
    endif()
  endif()
endforeach()

if(GUI)
  file(GLOB gui_deb ${WORK_DIR}/pipesqueeze_*.deb)
  list(LENGTH gui_deb n)
  if(NOT n EQUAL 1)
    fail("expected one pipesqueeze_*.deb for the desktop app, found ${n}")
  endif()
  deb_field(${gui_deb} Depends gui_depends)
  if(NOT gui_depends MATCHES "pipesqueeze-cli \\(= ${version}\\)")
    fail("the desktop package does not depend on pipesqueeze-cli (= ${version}): Depends: ${gui_depends}")
  endif()
  if(NOT gui_depends MATCHES "libqt6widgets6")
    fail("the desktop package does not depend on Qt Widgets: Depends: ${gui_depends}")
  endif()
  expect_entries(${gui_deb} /bin/pipesqueeze /share/applications/pipesqueeze.desktop
                 /share/icons/hicolor/scalable/apps/pipesqueeze.svg /share/man/man1/pipesqueeze.1
                 /share/doc/pipesqueeze/copyright)
endif()
message("packages: ${cli_deb} ${gui_deb}\n  pipesqueeze-cli Depends: ${cli_depends}")
