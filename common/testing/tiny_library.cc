// A shared library for shared_library_test: exports one function; with TINY_CRASH defined its
// initialiser dies of SIGSEGV, as a library the loader cannot take would.
#include <csignal>

extern "C" __attribute__((visibility("default"))) int tiny_entry() { return 42; }

#ifdef TINY_CRASH
__attribute__((constructor)) static void crash_on_load() { std::raise(SIGSEGV); }
#endif
