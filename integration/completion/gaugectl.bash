# bash completion for gaugectl (install as /usr/share/bash-completion/completions/gaugectl)

_gaugectl() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion || return
    else
        COMPREPLY=()
        cur="${COMP_WORDS[COMP_CWORD]}"
        prev="${COMP_WORDS[COMP_CWORD-1]}"
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi

    local commands="progress message title mode success failure running theme reload show hide deactivate reactivate newroot status ping wait-ready wait wait-key snapshot quit gauge swupdate bootc apt run systemd rauc fwupd packagekit console-reset copy-font send help"
    local global_options="--socket --timeout --no-wait --help -h --version"

    # The command is the first word after the global options (and their values).
    local i command=""
    for ((i = 1; i < cword; i++)); do
        case "${words[i]}" in
            --socket | --timeout) ((i++)) ;;
            -*) ;;
            *) command="${words[i]}"; break ;;
        esac
    done

    if [[ -z $command ]]; then
        case "$prev" in
            --socket)
                COMPREPLY=($(compgen -f -- "$cur"))
                return
                ;;
            --timeout)
                COMPREPLY=($(compgen -W "0.5 1 5 10 30 0" -- "$cur"))
                return
                ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global_options" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    case "$command" in
        progress)
            [[ $prev == --message || $prev == -m ]] && return
            COMPREPLY=($(compgen -W "--message --help" -- "$cur"))
            ;;
        mode)
            COMPREPLY=($(compgen -W "determinate indeterminate --help" -- "$cur"))
            ;;
        status)
            COMPREPLY=($(compgen -W "--json --help" -- "$cur"))
            ;;
        quit)
            COMPREPLY=($(compgen -W "--retain --help" -- "$cur"))
            ;;
        ping)
            COMPREPLY=($(compgen -W "--absent --help" -- "$cur"))
            ;;
        newroot)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--help" -- "$cur"))
            else
                COMPREPLY=($(compgen -d -- "$cur"))
            fi
            ;;
        snapshot | copy-font)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--help" -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            ;;
        theme)
            if [[ $prev == --set ]]; then
                local themes=${GAUGE_THEMES:-/usr/share/gauge/themes} names=() path
                for path in "$themes"/*.theme; do [[ -e $path ]] && path=${path##*/} && names+=("${path%.theme}"); done
                COMPREPLY=($(compgen -W "${names[*]}" -- "$cur"))
                return
            fi
            COMPREPLY=($(compgen -W "--list --set --rebuild-initramfs --help" -- "$cur"))
            ;;
        failure)
            [[ $prev == --title || $prev == -t ]] && return
            if [[ $prev == --details || $prev == -d ]]; then
                COMPREPLY=($(compgen -f -- "$cur"))
                return
            fi
            COMPREPLY=($(compgen -W "--title --details --help" -- "$cur"))
            ;;
        gauge)
            [[ $prev == --message || $prev == -m || $prev == --title || $prev == -t || $prev == --range ]] && return
            if [[ $prev == --on-eof ]]; then
                COMPREPLY=($(compgen -W "success quit keep" -- "$cur"))
                return
            fi
            COMPREPLY=($(compgen -W "--title --message --on-eof --range --help" -- "$cur"))
            ;;
        swupdate)
            case "$prev" in
                --progress-socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                --layout) COMPREPLY=($(compgen -W "auto packed aligned" -- "$cur")); return ;;
            esac
            [[ $prev == --stall || $prev == --creep ]] && return
            COMPREPLY=($(compgen -W "--progress-socket --layout --stall --creep --help" -- "$cur"))
            ;;
        bootc)
            case "$prev" in
                --file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                --on-eof) COMPREPLY=($(compgen -W "auto success failure keep" -- "$cur")); return ;;
                --fd | --success-message | --failure-message | --stall | --creep) return ;;
            esac
            COMPREPLY=($(compgen -W "--fd --file --on-eof --success-message --failure-message --stall --creep --help" -- "$cur"))
            ;;
        apt)
            local word
            for word in "${words[@]:1:cword-1}"; do
                [[ $word == -- ]] && { COMPREPLY=($(compgen -c -- "$cur")); return; }
            done
            [[ $prev == --fd || $prev == --range || $prev == --stall || $prev == --creep ]] && return
            COMPREPLY=($(compgen -W "--fd --range --stall --creep --help --" -- "$cur"))
            ;;
        run)
            local word
            for word in "${words[@]:1:cword-1}"; do
                [[ $word == -- ]] && { COMPREPLY=($(compgen -c -- "$cur")); return; }
            done
            [[ $prev == --title || $prev == -t || $prev == --message || $prev == -m || $prev == --range || $prev == --stall || $prev == --creep ]] && return
            COMPREPLY=($(compgen -W "--title --message --range --stall --creep --help --" -- "$cur"))
            ;;
        systemd)
            case "$prev" in
                --address | --interval | --success-message | --stall) return ;;
            esac
            COMPREPLY=($(compgen -W "--address --interval --success-message --boot-estimate --stall --help" -- "$cur"))
            ;;
        rauc | fwupd)
            case "$prev" in
                --address | --interval | --success-message | --failure-message | --stall | --creep) return ;;
            esac
            local extra=""
            [[ $command == fwupd ]] && extra="--failure-message"
            COMPREPLY=($(compgen -W "--address --interval --success-message $extra --stall --creep --help" -- "$cur"))
            ;;
        packagekit)
            [[ $prev == --address ]] && return
            COMPREPLY=($(compgen -W "--address --help" -- "$cur"))
            ;;
        send)
            if ((i + 1 == cword)); then
                COMPREPLY=($(compgen -W "progress message title mode state failure failure-summary failure-line failure-clear theme reload show hide deactivate reactivate newroot ping status wait snapshot quit" -- "$cur"))
            fi
            ;;
        help)
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
            ;;
        *)
            COMPREPLY=($(compgen -W "--help" -- "$cur"))
            ;;
    esac
}

complete -F _gaugectl gaugectl
