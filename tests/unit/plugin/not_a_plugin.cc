// A shared library without the plugin entry point, for the loader's refusal test.
extern "C" int kbench_not_a_plugin(void) { return 0; }
