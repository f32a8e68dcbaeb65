// Hand freed heap memory back to the operating system (docs/design.md § Memory that comes back).
// glibc keeps what a program freed in its arenas, one per thread that ever allocated: after the
// headless worker thread and busy sessions are gone, hundreds of MB of free pages stay resident.
// malloc_trim(0) releases the free pages of every arena; other C libraries have nothing to do.
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

// trimFreedMemory(): true when the C library released memory, false when it had none to give
// (or has no such call).
static napi_value trim_freed_memory(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#if defined(__GLIBC__)
  released = malloc_trim(0);
#endif
  napi_value result;
  napi_get_boolean(env, released != 0, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"trimFreedMemory", NULL, trim_freed_memory, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}

NAPI_MODULE_INIT() { return init(env, exports); }
