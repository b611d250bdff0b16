#!/bin/sh
# completion.sh PROGRAM NAME OUT - writes the bash completion of NAME from
# PROGRAM --help: every long option --help names is offered, and options
# whose value --help calls FILE complete file names. Generated at build time,
# so the completion cannot drift from --help (tests/install checks it does not).
set -eu
prog=$1 name=$2 out=$3
help=$("$prog" --help)
opts=$(printf '%s\n' "$help" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' ')
file_opts=$(printf '%s\n' "$help" | grep -o -- '--[a-z][a-z0-9-]*[ =]FILE' |
            sed 's/[ =]FILE$//' | sort -u | tr '\n' '|')
fn=_$(printf '%s' "$name" | tr -c 'a-zA-Z0-9\n' '_')
mkdir -p "$(dirname "$out")"
{
  echo "# bash completion for $name, generated from '$name --help' by packaging/completion.sh"
  echo "$fn()"
  echo "{"
  echo "    local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}"
  if [ -n "$file_opts" ]; then
    echo "    case \$prev in"
    echo "        ${file_opts%|})"
    echo "            COMPREPLY=(\$(compgen -f -- \"\$cur\"))"
    echo "            return ;;"
    echo "    esac"
  fi
  echo "    COMPREPLY=(\$(compgen -W '${opts% }' -- \"\$cur\"))"
  echo "}"
  echo "complete -o default -F $fn $name"
} >"$out.tmp"
mv "$out.tmp" "$out"
