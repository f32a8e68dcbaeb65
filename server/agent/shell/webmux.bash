# webmux shell integration for bash.
#
# webmux starts an interactive bash as `bash --rcfile <this file> -i`, so nothing of the
# user's is touched: this file loads the user's own startup files first, then reports
# where prompts and commands begin and end as OSC 133 marks (A prompt start, B prompt
# end, C command starts, D;<status> command finished) and the working directory as OSC 7
# (webmux reads the command line from its echo between B and C: no subshell per command). Every mark carries `webmux=<nonce>`, a secret of
# this session that no program ever sees (it is unset from the environment below), so
# text a program prints cannot pass for a mark. Command starts need PS0 (bash >= 4.4).

# --rcfile is only read by non-login shells: for a login shell, read what bash -l would.
if [ -n "${WEBMUX_SHELL_LOGIN-}" ]; then
  builtin unset WEBMUX_SHELL_LOGIN
  if [ -r /etc/profile ]; then . /etc/profile; fi
  if [ -r ~/.bash_profile ]; then . ~/.bash_profile
  elif [ -r ~/.bash_login ]; then . ~/.bash_login
  elif [ -r ~/.profile ]; then . ~/.profile
  fi
else
  if [ -r ~/.bashrc ]; then . ~/.bashrc; fi
fi

__webmux_nonce=${WEBMUX_SHELL_NONCE-}
builtin unset WEBMUX_SHELL_NONCE
builtin export -n __webmux_nonce 2>/dev/null

if [[ -n $__webmux_nonce ]] && (( BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4) )); then
  # Without PS0 there is no command-start mark: tell webmux to detect prompts instead.
  builtin printf '\e]633;P;Integration=none;webmux=%s\a' "$__webmux_nonce"
  __webmux_nonce=
fi

if [[ -n $__webmux_nonce ]]; then
  __webmux_ran=
  __webmux_status=0
  __webmux_url=
  __webmux_mark_b="\[\e]133;B;webmux=${__webmux_nonce}\a\]"
  # ${x:0:$((…))} expands to nothing; its arithmetic records, without a subshell, that a command runs.
  __webmux_mark_c="\${__webmux_ran:0:\$((__webmux_ran=1,0))}\e]133;C;webmux=${__webmux_nonce}\a"

  # $PWD as the path of a file:// URL (percent-encoded bytes).
  __webmux_encode_pwd() {
    builtin local LC_ALL=C path="$PWD" out= c i
    if [[ $path != *[!A-Za-z0-9/._~-]* ]]; then
      __webmux_url=$path
      builtin return 0
    fi
    for (( i = 0; i < ${#path}; i++ )); do
      c=${path:i:1}
      case $c in
        [A-Za-z0-9/._~-]) out+=$c ;;
        *) builtin printf -v c '%%%02X' "'$c"; out+=$c ;;
      esac
    done
    __webmux_url=$out
  }

  # First in PROMPT_COMMAND: the status of the command that just ended, before anything changes it.
  __webmux_precmd() {
    __webmux_status=$?
    if [[ -n $__webmux_ran ]]; then
      __webmux_ran=
      builtin printf '\e]133;D;%s;webmux=%s\a' "$__webmux_status" "$__webmux_nonce"
    fi
    __webmux_encode_pwd
    builtin printf '\e]133;A;status=%s;webmux=%s\a\e]7;file://%s%s\a' "$__webmux_status" "$__webmux_nonce" "${HOSTNAME-}" "$__webmux_url"
    builtin return "$__webmux_status"
  }

  # Last in PROMPT_COMMAND: keep the marks in prompts the user's hooks may have rebuilt.
  __webmux_prompt_end() {
    [[ $PS1 == *"$__webmux_mark_b"* ]] || PS1+=$__webmux_mark_b
    [[ ${PS0-} == *"$__webmux_mark_c"* ]] || PS0=$__webmux_mark_c${PS0-}
    builtin return "$__webmux_status"
  }

  PS1+=$__webmux_mark_b
  PS0=$__webmux_mark_c${PS0-}
  if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    PROMPT_COMMAND=(__webmux_precmd "${PROMPT_COMMAND[@]}" __webmux_prompt_end)
  else
    PROMPT_COMMAND="__webmux_precmd${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}"$'\n'"__webmux_prompt_end"
  fi
fi
