// ThreadSanitizer reads its defaults from this hook when the test runs instrumented: it points
// TSan at tests/tsan.supp, which suppresses reports whose stacks are inside uninstrumented
// oneTBB (libtbb's own synchronization is invisible to TSan). Not used in other builds.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_options() {
    return "suppressions=" ROTOR_SOURCE_DIR "/tests/tsan.supp";
}
#endif
