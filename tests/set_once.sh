# Sourced by test scripts: set_once ARGS... prints ARGS, NUL-separated, with
# only the last `--set SECTION.KEY=VALUE` of each key (minimodel refuses a key
# given twice), so that a script can override its common settings:
#   mapfile -d '' args < <(set_once "${common[@]}" --set output.dir=elsewhere)
set_once() {
  local -a in=("$@") keep=()
  local -A last=()
  local i key
  for ((i = 0; i < ${#in[@]}; i++)); do
    if [ "${in[i]}" = --set ] && [ $((i + 1)) -lt ${#in[@]} ]; then
      key=${in[i + 1]%%=*}
      last[$key]=$i
    fi
  done
  for ((i = 0; i < ${#in[@]}; i++)); do
    if [ "${in[i]}" = --set ] && [ $((i + 1)) -lt ${#in[@]} ]; then
      key=${in[i + 1]%%=*}
      if [ "${last[$key]}" = "$i" ]; then keep+=(--set "${in[i + 1]}"); fi
      i=$((i + 1))
    else
      keep+=("${in[i]}")
    fi
  done
  [ ${#keep[@]} -eq 0 ] || printf '%s\0' "${keep[@]}"
}
