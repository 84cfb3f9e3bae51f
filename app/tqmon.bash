# bash completion for tqmon (installed by make install into
# share/bash-completion/completions/tqmon)
_tqmon() {
  local cur prev cmds opts
  COMPREPLY=()
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  cmds="check explain run serve display record convert pcp sensors load sql show report pms help"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
    return 0
  fi
  case $prev in
    --format) COMPREPLY=($(compgen -W "table csv jsonl" -- "$cur")); return 0 ;;
    --replay | --db | --stats | --record | --html | -o | --output | --exec-output | --csv)
      COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    --pm-path) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
    --pm) COMPREPLY=($(compgen -W "$(tqmon pms 2>/dev/null | awk '/^  [a-z]/ {print $1}')" -- "$cur")); return 0 ;;
    --attach) COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur")); return 0 ;;
    --exec) COMPREPLY=($(compgen -c -- "$cur")); return 0 ;;
    help) COMPREPLY=($(compgen -W "$cmds" -- "$cur")); return 0 ;;
  esac
  if [[ $cur == -* ]]; then
    opts="--help --replay --exec --exec-output --attach --host --kernel --pcp --pcp-archive --pcp-record --pm --pm-path
      --db --format --stream --sorted --utc --relative --quiet --record --stats --no-opt --time-limit --max-ticks --threads
      --snapshots --html --display --serve --trace --trace-level --programs --print --csv --transactions --top -o"
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return 0
  fi
  COMPREPLY=($(compgen -f -X '!*.@(tq|trace|tqc|db)' -- "$cur") $(compgen -d -- "$cur"))
}
complete -o filenames -F _tqmon tqmon
