/* The kernel plugin ABI: the one entry point a build of libkbench_kernels.so exports, so that a runner
 * can load the worker's own copy of the suite or another build of it (a pull request's base or head)
 * with dlopen. See kernels/plugin/README.md.
 *
 * Version 1 hands over the library's kbench::kernels::Registry, a C++ object, behind a void pointer.
 * That is only safe between builds that agree on the layout of every type it reaches (OpDef, Variant,
 * Problem, TensorSpec, ... and the standard library's string, vector, function): layout_fingerprint
 * is a hash of those types' sizes, alignments and member offsets, computed at compile time on each
 * side (plugin_layout.h), and a loader refuses a library whose fingerprint or version differs. */
#ifndef KBENCH_KERNELS_PLUGIN_KBENCH_PLUGIN_H_
#define KBENCH_KERNELS_PLUGIN_KBENCH_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change of this struct or of what `registry` points to beyond the layout. */
#define KBENCH_PLUGIN_ABI_VERSION 1u
#define KBENCH_PLUGIN_ENTRY_SYMBOL "kbench_plugin_v1"

typedef struct KbenchPluginV1 {
  uint32_t abi_version;        /* KBENCH_PLUGIN_ABI_VERSION of the build. */
  uint64_t layout_fingerprint; /* kbench::kernels::plugin::LayoutFingerprint() of the build. */
  const char* build_id;        /* Compiler, CUDA or not, build date: for humans and logs. */
  const char* suite_version;   /* The suite's version (project version). */
  const void* registry;        /* const kbench::kernels::Registry*: the library's ops. Lives forever. */
} KbenchPluginV1;

/* The entry point. Never returns NULL; the struct lives as long as the library stays loaded. */
__attribute__((visibility("default"))) const KbenchPluginV1* kbench_plugin_v1(void);

typedef const KbenchPluginV1* (*KbenchPluginEntryV1)(void);

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_KERNELS_PLUGIN_KBENCH_PLUGIN_H_ */
