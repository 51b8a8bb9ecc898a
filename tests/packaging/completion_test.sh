#!/usr/bin/env bash
# The bash completion and the manual page against the CLI they describe: every subcommand and every option that
# `--help` prints must be offered by the completion and named in the manual page, and names complete from the lab.
#   completion_test.sh PATH/TO/pipesqueeze-cli SOURCE_DIR
set -u
cli=$1 src=$2
man=$src/docs/man/pipesqueeze-cli.1
fails=0
# shellcheck source=../../packaging/pipesqueeze-cli.bash-completion
source "$src/packaging/pipesqueeze-cli.bash-completion"

offers() {  # the completion for the command line "pipesqueeze-cli $@", the last word being completed
  COMP_WORDS=("$cli" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _pipesqueeze_cli
  printf '%s\n' "${COMPREPLY[@]}"
}
expect() {  # expect WORD COMMAND-LINE...
  local want=$1 got
  shift
  got=$(offers "$@")
  if ! grep -qxF -- "$want" <<<"$got"; then
    echo "FAIL: completing 'pipesqueeze-cli $*' does not offer '$want' (it offers: $(tr '\n' ' ' <<<"$got"))"
    fails=$((fails + 1))
    return 1
  fi
}
in_manual() {  # in_manual WORD: the manual page names it (options as roff writes them, \- for each dash)
  local roff=${1//-/\\-}
  if ! grep -qF -- "$roff" "$man"; then
    echo "FAIL: the manual page does not name '$1'"
    fails=$((fails + 1))
  fi
}
subcommands() { "$cli" "$@" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ { print $1 }'; }
options() { "$cli" "$@" --help | grep -oE '^ +(-[a-z],)?--[a-z-]+' | grep -oE -- '--[a-z-]+' | grep -vx -- --help; }

top=$(subcommands)
[[ -n $top ]] || { echo "FAIL: no subcommands in pipesqueeze-cli --help"; exit 1; }
for s in $top; do
  expect "$s" ""
  in_manual "$s"
  nested=$(subcommands "$s")
  for path in "$s" ${nested:+$(for n in $nested; do echo "$s:$n"; done)}; do
    words=(${path//:/ })
    [[ $path == *:* ]] && { expect "${words[1]}" "${words[0]}" ""; in_manual "${words[1]}"; }
    [[ -n $nested && $path != *:* ]] && continue  # a group: its options are its subcommands'
    for o in $(options "${words[@]}"); do
      expect "$o" "${words[@]}" -
      in_manual "$o"
    done
  done
done
for o in $(options); do expect "$o" -; in_manual "$o"; done

# Names come from the lab itself, and an option's value is not taken for a subcommand.
expect fashion-mnist-4stage train --preset fashion-mnist-4
expect train.lr= train --set train.l
expect compression.forward.method= launch --set compression.forward.met
expect --store train --preset fashion-mnist-4stage --sto
expect k= codec encode --set k
expect value_bits= codec encode --set value_b
expect topk codec encode --method top
expect ef21 codec encode --feedback ef2
expect gradients-milder suite run gradients-m
expect export runs ex
expect compensations names comp

# After a suite's name come its options; folders are offered on the way to a preset file; a preset name with a space
# or a glob character stays one name.
expect --seeds suite run gradients-milder ""
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/my presets" "$scratch/folder"
printf '{}' >"$scratch/my presets/with space.json"
printf '{}' >"$scratch/my presets/star*.json"
(cd "$scratch" && expect folder train --preset fol) || fails=$((fails + 1))
export PIPESQUEEZE_PRESETS="$scratch/my presets"
expect "with space" train --preset with
expect "star*" train --preset sta
unset PIPESQUEEZE_PRESETS

# Both manual pages format without a warning where groff is installed.
if command -v groff >/dev/null; then
  for page in "$src"/docs/man/*.1; do
    warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
    [[ -z $warnings ]] || { echo "FAIL: $page: $warnings"; fails=$((fails + 1)); }
  done
fi

if ((fails)); then
  echo "$fails problem(s)"
  exit 1
fi
echo "completion and manual page cover $(wc -w <<<"$top") subcommands and their options"
