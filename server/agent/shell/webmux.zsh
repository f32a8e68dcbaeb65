# webmux shell integration for zsh, sourced by the .zshrc of the ZDOTDIR webmux points
# zsh at (after the user's own .zshrc; nothing of the user's is touched).
#
# Reports where prompts and commands begin and end as OSC 133 marks (A prompt start,
# B prompt end, C command starts, D;<status> command finished), the command line as
# OSC 633;E and the working directory as OSC 7. Every mark carries `webmux=<nonce>`, a
# secret of this session that no program ever sees (it is unset from the environment
# below), so text a program prints cannot pass for a mark.

typeset -g __webmux_nonce=${WEBMUX_SHELL_NONCE-}
unset WEBMUX_SHELL_NONCE

if [[ -n $__webmux_nonce ]]; then
  typeset -g __webmux_ran= __webmux_prompt_sp= __webmux_url=
  typeset -g __webmux_mark_b=$'%{\e]133;B;webmux='$__webmux_nonce$'\a%}'

  # zsh prints its PROMPT_SP padding before any precmd hook, which would put it inside the
  # finished command's output; webmux turns the option off and prints the same padding itself,
  # right after the D mark.
  __webmux_take_prompt_sp() {
    if [[ -o prompt_sp && -o prompt_cr ]]; then
      __webmux_prompt_sp=1
      unsetopt prompt_sp
    fi
  }
  __webmux_take_prompt_sp

  __webmux_prompt_sp_padding() {
    emulate -L zsh
    local mark=${PROMPT_EOL_MARK-'%B%S%#%s%b'}
    local shown=${(%)mark}
    local visible=${(%)${mark//\%[BbSsUu]/}}
    local w=${(m)#visible}
    builtin printf '%s%*s\r%*s\r' "$shown" $(( COLUMNS - w )) '' $w ''
  }

  # $PWD as the path of a file:// URL (percent-encoded bytes).
  __webmux_encode_pwd() {
    emulate -L zsh
    setopt extendedglob
    local LC_ALL=C
    __webmux_url=${PWD//(#m)[^A-Za-z0-9\/._~-]/%${(l:2::0:)$(( [##16] #MATCH ))}}
  }

  # First precmd hook: the status of the command that just ended, before anything changes it.
  __webmux_precmd() {
    local s=$?
    if [[ -n $__webmux_ran ]]; then
      __webmux_ran=
      builtin printf '\e]133;D;%s;webmux=%s\a' $s $__webmux_nonce
    fi
    [[ -o prompt_sp ]] && __webmux_take_prompt_sp
    [[ -n $__webmux_prompt_sp ]] && __webmux_prompt_sp_padding
    __webmux_encode_pwd
    builtin printf '\e]133;A;status=%s;webmux=%s\a\e]7;file://%s%s\a' $s $__webmux_nonce "${HOST-}" "$__webmux_url"
    return $s
  }

  # Last precmd hook: keep the B mark in a prompt the user's hooks may have rebuilt.
  __webmux_prompt_end() {
    local s=$?
    [[ $PS1 == *"$__webmux_mark_b"* ]] || PS1+=$__webmux_mark_b
    return $s
  }

  __webmux_preexec() {
    __webmux_ran=1
    local line=${1//\\/\\\\}
    line=${line//;/\\x3b}
    line=${line//$'\n'/\\x0a}
    line=${line//$'\r'/\\x0d}
    line=${line//$'\e'/\\x1b}
    line=${line//$'\a'/\\x07}
    builtin printf '\e]633;E;%s;webmux=%s\a\e]133;C;webmux=%s\a' "$line" $__webmux_nonce $__webmux_nonce
  }

  PS1+=$__webmux_mark_b
  precmd_functions=(__webmux_precmd $precmd_functions __webmux_prompt_end)
  preexec_functions+=(__webmux_preexec)
fi
