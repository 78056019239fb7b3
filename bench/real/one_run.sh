# Sourced by bench/real/run.sh, in its shell (not run on its own): how one
# program runs once under one configuration (run_one: the wrappers of
# each tracer, the LTTng sessions, the redis server and its client, the
# timeouts, the measurements recorded with rec) and the check of a sonde
# log against the program's own counts (check_log). Only definitions and
# two settings; run.sh's rounds call them. It uses run.sh's settings (OUT,
# RAW, CHECKS, SCRATCH, BIN, SONDE, the workload sizes, RUN_TIMEOUT) and
# helpers (say, die, rec, fail, warn).
# shellcheck shell=bash

# WRAP: the command prefix of a configuration; BINV: which build it runs.
set_wrap() {  # config trace-dir
  local c=$1 t=$2
  WRAP=(); BINV=$IV
  case $c in
    plain) BINV=plain ;;
    noop) ;;
    sonde-null) WRAP=("$SONDE" run --writer null --out "$t" --) ;;
    sonde) WRAP=("$SONDE" run --out "$t" --) ;;
    # A first run: what earlier runs culled is neither used nor kept,
    # except by the profiling run (round 0), which fills its program's
    # cache for sonde-cull-again.
    sonde-cull)
      if [ "$ROUND_OF" = 0 ] && [ $HAVE_CULL_CACHE = 1 ]; then
        WRAP=(env "SONDE_CULL_CACHE=$CACHES/$PROFILE_OF" "$SONDE" run --cull --out "$t" --)
      elif [ $HAVE_CULL_CACHE = 1 ]; then
        WRAP=("$SONDE" run --cull --no-cull-cache --out "$t" --)
      else
        WRAP=("$SONDE" run --cull --out "$t" --)
      fi ;;
    # The next --cull run as a user makes it (docs/cull.md, "Across runs"):
    # it starts with what the profiling run culled. Each run gets a fresh
    # copy, so that the rounds do not learn from one another.
    sonde-cull-again)
      rm -rf "$SCRATCH/cull-cache" && cp -r "$CACHES/$PROFILE_OF" "$SCRATCH/cull-cache"
      WRAP=(env "SONDE_CULL_CACHE=$SCRATCH/cull-cache" "$SONDE" run --cull --out "$t" --) ;;
    # The documented second run (docs/cull.md): the report a --cull run
    # wrote, as the patterns file, excludes its functions from the first call.
    sonde-profile) WRAP=("$SONDE" run --set "patterns_file=$PROFILES/$PROFILE_OF.txt" --out "$t" --) ;;
    uftrace) WRAP=(uftrace record --no-libcall -d "$t/uftrace.data") ;;
    lttng) WRAP=(env "LD_PRELOAD=$LTTNG_LIB") ;;
  esac
}

LTTNG_N=0
lttng_begin() {  # trace-dir -> LTTNG_SESSION
  LTTNG_N=$((LTTNG_N + 1))
  LTTNG_SESSION="real-bench-$$-$LTTNG_N"
  lttng create "$LTTNG_SESSION" --output="$1" >"$1.lttng.txt" 2>&1 || return 1
  LTTNG_SESSIONS+=("$LTTNG_SESSION")
  lttng enable-event --userspace --all --session="$LTTNG_SESSION" >>"$1.lttng.txt" 2>&1 &&
    lttng start "$LTTNG_SESSION" >>"$1.lttng.txt" 2>&1
}
lttng_end() {  # trace-dir -> LTTNG_DISCARDED: the events LTTng says it discarded
  lttng stop "$LTTNG_SESSION" >>"$1.lttng.txt" 2>&1 || true
  lttng destroy "$LTTNG_SESSION" >>"$1.lttng.txt" 2>&1 || true
  LTTNG_SESSIONS=("${LTTNG_SESSIONS[@]/$LTTNG_SESSION}")
  # lttng 2.13: "Warning: N events were discarded, ..." / "N packets were lost".
  LTTNG_DISCARDED="$({ grep -oE '[0-9]+ events? (were|was|has been|have been) discarded' "$1.lttng.txt" || true; } |
    awk '{s += $1} END {print s + 0}')"
  LTTNG_LOST_PACKETS="$({ grep -oE '[0-9]+ packets? (were|was|has been|have been) lost' "$1.lttng.txt" || true; } |
    awk '{s += $1} END {print s + 0}')"
}

# run_fg OUT ERR CMD...: one program run under a time limit, in the
# background so that the trap can stop it.
run_fg() {
  local o=$1 e=$2 rc=0; shift 2
  timeout -k 10 "$RUN_TIMEOUT" "$@" >"$o" 2>"$e" &
  CUR_PID=$!
  wait "$CUR_PID" || rc=$?
  CUR_PID=""
  return $rc
}

free_port() {
  local p=$((20000 + RANDOM % 20000))
  while ss -Htln "sport = :$p" 2>/dev/null | grep -q .; do p=$((p + 1)); done
  echo $p
}

# The state of a process group's threads (for a server that hangs): state,
# CPU time, wait channel and current system call of each.
proc_snapshot() {  # leader-pid file
  {
    echo "== $(date -u +%H:%M:%S) process group $1"
    local q tsk
    for q in $(pgrep -g "$1" 2>/dev/null); do
      echo "-- pid $q: $(tr '\0' ' ' <"/proc/$q/cmdline" 2>/dev/null | cut -c1-200)"
      for tsk in /proc/"$q"/task/*; do
        printf '%s %s state=%s utime=%s stime=%s wchan=%s syscall=%s\n' "${tsk##*/}" "$(cat "$tsk/comm" 2>/dev/null)" \
          "$(awk '{print $3}' "$tsk/stat" 2>/dev/null)" "$(awk '{print $14}' "$tsk/stat" 2>/dev/null)" \
          "$(awk '{print $15}' "$tsk/stat" 2>/dev/null)" "$(cat "$tsk/wchan" 2>/dev/null)" \
          "$(cut -d' ' -f1 "$tsk/syscall" 2>/dev/null)"
      done
    done
  } >>"$2" 2>&1 || true
}

wait_pid() {  # pid seconds: 0 when it ended in time
  local i
  for ((i = 0; i < $2 * 10; i++)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}

# The sonde exit summary: "sonde: N events written, M lost, log: PATH".
sonde_exit_line() {  # round program config stderr-file
  local line
  line="$(tr '\r' '\n' <"$4" | grep -E '^sonde: [0-9]+ events written, [0-9]+ lost' | tail -1 || true)"
  if [ -z "$line" ]; then
    fail "$1" "$2" "$3" "no 'sonde: N events written, M lost' line at exit (log not closed?)"
    return
  fi
  rec "$1" "$2" "$3" events_written "$(sed -E 's/^sonde: ([0-9]+) events written.*/\1/' <<<"$line")"
  rec "$1" "$2" "$3" events_lost "$(sed -E 's/^sonde: [0-9]+ events written, ([0-9]+) lost.*/\1/' <<<"$line")"
  # "sonde: writer thread: X ms CPU, Y ns per event", "sonde: writer health:
  # probes waited Z ms in all for free buffers; ..." (when printed).
  local v
  v="$(tr '\r' '\n' <"$4" | sed -nE 's/^sonde: writer thread: .* ([0-9.]+) ns per event.*/\1/p' | tail -1)"
  [ -z "$v" ] || rec "$1" "$2" "$3" writer_ns_per_event "$v"
  v="$(tr '\r' '\n' <"$4" | sed -nE 's/^sonde: writer health: probes waited ([0-9.]+) ms.*/\1/p' | tail -1)"
  [ -z "$v" ] || rec "$1" "$2" "$3" probes_waited_ms "$v"
  return 0
}

run_one() {  # round program config
  local r=$1 p=$2 c=$3 d="$SCRATCH/run/$2-$3-$1" rc=0 t0 t1
  local t="$d/trace" data="$d/data"
  rm -rf "$d" && mkdir -p "$data" "$t"
  PROFILE_OF=$p
  ROUND_OF=$r
  set_wrap "$c" "$t"
  if [ "$c" = lttng ]; then
    lttng_begin "$t" || { fail "$r" "$p" "$c" "lttng create/enable-event/start failed: $(tail -1 "$t.lttng.txt")"; return; }
  fi
  t0=$(date +%s.%N)
  case $p in
    leveldb)
      run_fg "$d/out.txt" "$d/err.txt" "${WRAP[@]}" "$BIN/leveldb-$BINV/db_bench" --benchmarks=fillseq,readrandom \
        --num="$LEVELDB_NUM" --db="$data/db" || rc=$?
      ;;
    sqlite)
      run_fg "$d/out.txt" "$d/err.txt" "${WRAP[@]}" "$BIN/sqlite-$BINV/speedtest1" --size "$SQLITE_SIZE" \
        "$data/speedtest1.db" || rc=$?
      ;;
    redis)
      local port pid ready=0
      port=$(free_port)
      setsid "${WRAP[@]}" "$BIN/redis-$BINV/src/redis-server" --port "$port" --bind 127.0.0.1 --save "" \
        --appendonly no --daemonize no --dir "$data" --logfile "" >"$d/server.txt" 2>&1 &
      pid=$!
      SERVER_PIDS+=("$pid")
      for _ in $(seq 300); do
        if timeout 5 "$BIN/redis-plain/src/redis-cli" -p "$port" ping 2>/dev/null | grep -q PONG; then ready=1; break; fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if [ $ready = 1 ]; then
        t0=$(date +%s.%N)
        run_fg "$d/out.txt" "$d/err.txt" "$BIN/redis-plain/src/redis-benchmark" -h 127.0.0.1 -p "$port" \
          -t set,get -n "$REDIS_N" -c 20 -q || rc=$?
        # Pipelined (-P 16): 16 commands per round trip, so the server's
        # own CPU, not loopback round trips, bounds the rate, and what the
        # instrumentation costs redis shows (without it, sonde and the no-op
        # hooks differ by less than the run-to-run noise).
        [ $rc != 0 ] || run_fg "$d/out-pipelined.txt" "$d/err-pipelined.txt" \
          "$BIN/redis-plain/src/redis-benchmark" -h 127.0.0.1 -p "$port" \
          -t set,get -n "$REDIS_N" -c 20 -P 16 -q || rc=$?
        cat "$d/err-pipelined.txt" >>"$d/err.txt" 2>/dev/null || true
        [ $rc = 0 ] || proc_snapshot "$pid" "$d/server-state.txt"
        timeout 30 "$BIN/redis-plain/src/redis-cli" -p "$port" shutdown nosave >/dev/null 2>&1 || true
        if ! wait_pid "$pid" 60; then
          proc_snapshot "$pid" "$d/server-state.txt"
          fail "$r" "$p" "$c" "redis-server did not stop within 90 s of SHUTDOWN; killed (its threads' states in ${OUT#$ROOT/}/failed/$p-$c-$r/server-state.txt)"
          kill -TERM -- "-$pid" 2>/dev/null; wait_pid "$pid" 10 || kill -KILL -- "-$pid" 2>/dev/null
        fi
        local src=0; wait "$pid" 2>/dev/null || src=$?
        [ $src = 0 ] || fail "$r" "$p" "$c" "redis-server exited with status $src (see $(tail -1 "$d/server.txt"))"
      else
        kill -TERM -- "-$pid" 2>/dev/null; wait_pid "$pid" 10 || kill -KILL -- "-$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
        fail "$r" "$p" "$c" "redis-server did not start on port $port: $(tail -2 "$d/server.txt" | tr '\n' ' ')"
        rc=1
      fi
      SERVER_PIDS=("${SERVER_PIDS[@]/$pid}")
      cat "$d/server.txt" >>"$d/err.txt"
      ;;
  esac
  t1=$(date +%s.%N)
  rec "$r" "$p" "$c" wall_s "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')"
  if [ "$c" = lttng ]; then lttng_end "$t"; rec "$r" "$p" "$c" lttng_discarded "$LTTNG_DISCARDED"
    rec "$r" "$p" "$c" lttng_lost_packets "$LTTNG_LOST_PACKETS"; fi
  # Throughput figures, from the programs' own reports.
  local out; out="$(tr '\r' '\n' <"$d/out.txt"; tr '\r' '\n' <"$d/err.txt")"
  local v got=0
  case $p in
    leveldb)
      for b in fillseq readrandom; do
        v="$(sed -nE "s/^$b +: +([0-9.]+) micros\/op.*/\1/p" <<<"$out" | head -1)"
        [ -n "$v" ] && { rec "$r" "$p" "$c" "metric:$b" "$(awk -v u="$v" 'BEGIN {printf "%.1f", 1e6 / u}')"; got=1; }
      done ;;
    sqlite)
      v="$(sed -nE 's/^ +TOTAL\.+ +([0-9.]+)s$/\1/p' <<<"$out" | head -1)"
      [ -n "$v" ] && { rec "$r" "$p" "$c" "metric:total" "$v"; got=1; } ;;
    redis)
      for b in SET GET; do
        v="$(sed -nE "s/^$b: ([0-9.]+) requests per second.*/\1/p" <<<"$out" | head -1)"
        [ -n "$v" ] && { rec "$r" "$p" "$c" "metric:$b" "$v"; got=1; }
        v="$(tr '\r' '\n' <"$d/out-pipelined.txt" 2>/dev/null |
          sed -nE "s/^$b: ([0-9.]+) requests per second.*/\1/p" | head -1)"
        [ -n "$v" ] && rec "$r" "$p" "$c" "metric:${b}_P16" "$v"
      done ;;
  esac
  local kept="$OUT/failed/$p-$c-$r" nerr=${#ERRORS[@]} nwarn=${#WARNINGS[@]}
  if [ $rc != 0 ]; then
    local msg
    msg="$(tr '\r' '\n' <"$d/err.txt" | { grep -v -e '^\.\.\. finished' -e '^$' || true; } | tail -2 | tr '\n' ' ')"
    if [ $rc = 124 ]; then
      fail "$r" "$p" "$c" "timed out after ${RUN_TIMEOUT}s (output in ${kept#$ROOT/})"
    elif [ $got = 1 ] && { [ "$c" = uftrace ] || [ "$c" = lttng ]; }; then
      # A peer tracer failing after the workload reported its figures: kept,
      # but said (uftrace 0.13 sometimes fails at exit while threads run).
      warn "$r" "$p" "$c" "exited with status $rc after the workload finished: $msg(output in ${kept#$ROOT/})"
    else
      fail "$r" "$p" "$c" "exited with status $rc: $msg(output in ${kept#$ROOT/})"
    fi
  elif [ $got = 0 ]; then
    fail "$r" "$p" "$c" "no throughput figure in its output (output in ${kept#$ROOT/})"
  fi
  # Log sizes and the monitors' own counts (not after a run that produced nothing).
  if [ $rc != 0 ] && [ $got = 0 ]; then
    mkdir -p "$kept" && cp "$d"/*.txt "$kept"/ 2>/dev/null || true
    rm -rf "$d"
    return
  fi
  case $c in
    sonde|sonde-cull|sonde-cull-again|sonde-profile|sonde-null) sonde_exit_line "$r" "$p" "$c" "$d/err.txt" ;;
  esac
  case $c in
    sonde|sonde-cull|sonde-cull-again|sonde-profile|lttng) [ -d "$t" ] && rec "$r" "$p" "$c" log_bytes "$(du -sb "$t" | cut -f1)" ;;
    uftrace)
      if [ -d "$t/uftrace.data" ]; then
        rec "$r" "$p" "$c" log_bytes "$(du -sb "$t/uftrace.data" | cut -f1)"
        # uftrace's records are 16 bytes each (no arguments recorded).
        rec "$r" "$p" "$c" uftrace_records "$(cat "$t"/uftrace.data/*.dat 2>/dev/null | wc -c | awk '{print int($1 / 16)}')"
        grep -qiE 'lost' "$d/err.txt" && rec "$r" "$p" "$c" uftrace_lost "$(grep -iE 'lost' "$d/err.txt" | head -1)"
      fi ;;
  esac
  if [ "$r" = 1 ] && { [ "$c" = sonde ] || [ "$c" = sonde-cull ] || [ "$c" = sonde-cull-again ] || [ "$c" = sonde-profile ]; }; then
    check_log "$p" "$c" "$t"
  fi
  # Round 0 is the profiling run of sonde-profile: its report is kept.
  if [ "$r" = 0 ]; then
    local report; report="$(ls "$t"/*.cull.txt 2>/dev/null | head -1 || true)"
    if [ -n "$report" ]; then cp "$report" "$PROFILES/$p.txt"; else fail 0 "$p" "$c" "the profiling run wrote no cull report"; fi
  fi
  if [ ${#ERRORS[@]} != "$nerr" ] || [ ${#WARNINGS[@]} != "$nwarn" ]; then
    mkdir -p "$kept" && cp "$d"/*.txt "$kept"/ 2>/dev/null || true
    cp "$t"/*.txt "$kept"/ 2>/dev/null || true
  fi
  rm -rf "$d"
}

# The first round's sonde logs: read back completely (sonde check), traces
# reconstructed (sonde traces, sonde summary), names resolved.
CHECK_MAX_RECORDS="${REAL_BENCH_CHECK_MAX_RECORDS:-60000000}"
check_log() {  # program config trace-dir
  local p=$1 c=$2 t=$3 log k="$CHECKS/$1-$2"
  log="$(ls "$t"/*.sonde 2>/dev/null | head -1 || true)"
  if [ -z "$log" ]; then fail 1 "$p" "$c" "no .sonde log in $t"; return; fi
  local n; n="$(ls "$t"/*.sonde | wc -l)"
  [ "$n" = 1 ] || rec 1 "$p" "$c" check_note "$n logs (forked children?); checking $(basename "$log")"
  say "  checking $p / ${LABEL[$c]} log ($(du -h "$log" | cut -f1))"
  local rc=0
  "$SONDE" check "$log" >"$k.check.txt" 2>&1 || rc=$?
  rec 1 "$p" "$c" check_rc "$rc"
  local recs; recs="$(sed -nE 's/^records: ([0-9]+)$/\1/p' "$k.check.txt")"
  if [ -n "$recs" ] && [ "$recs" -gt "$CHECK_MAX_RECORDS" ]; then
    rec 1 "$p" "$c" check_note "trace reconstruction skipped: $recs records > REAL_BENCH_CHECK_MAX_RECORDS=$CHECK_MAX_RECORDS (whole-thread traces are held in memory)"
    return
  fi
  # sonde traces reconstructs the traces as sonde summary does; to keep the
  # run short it runs on the native writer's full-run logs only.
  if [ $QUICK = 0 ] && [ "$c" = sonde ]; then
    rc=0
    /usr/bin/time -f 'time_check %e s %M KiB' -o "$k.traces.time" "$SONDE" traces --summary --json "$log" \
      >"$k.traces.json" 2>"$k.traces.err" || rc=$?
    rec 1 "$p" "$c" traces_rc "$rc"
    rec 1 "$p" "$c" traces_cost "$(sed -n 's/^time_check //p' "$k.traces.time")"
  fi
  rc=0
  /usr/bin/time -f 'time_check %e s %M KiB' -o "$k.summary.time" "$SONDE" summary --format json "$log" \
    >"$k.summary.json" 2>"$k.summary.err" || rc=$?
  rec 1 "$p" "$c" summary_rc "$rc"
  rec 1 "$p" "$c" summary_cost "$(sed -n 's/^time_check //p' "$k.summary.time")"
  if [ $KEEP_LOGS = 1 ]; then mkdir -p "$OUT/logs" && cp "$log" "$OUT/logs/$p-$c.sonde"; fi
}

