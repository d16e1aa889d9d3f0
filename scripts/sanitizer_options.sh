# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/test.sh and scripts/stress.sh: the suite's sanitizer settings, before any the
# caller set (later ones win). Stop at the first report (so a report fails its test), full stacks.
# No detect_stack_use_after_return: it moves locals off the thread's stack, and the runtime
# measures its stack budget from the addresses of locals.
tsan_defaults=halt_on_error=1:second_deadlock_stack=1:history_size=4
asan_defaults=detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1
ubsan_defaults=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS="$tsan_defaults${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
export ASAN_OPTIONS="$asan_defaults${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="$ubsan_defaults${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
