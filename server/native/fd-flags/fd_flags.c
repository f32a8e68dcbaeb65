// Descriptor helpers Node lacks (docs/design.md, Runtimes: node-pty and Bun; The path of a keystroke).
// Close-on-exec for descriptors Node cannot flag itself:
// node-pty creates each PTY master without FD_CLOEXEC, so every process forked after it (the next
// session's shell, an agent started with child_process) would inherit it.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/socket.h>
#include <node_api.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <linux/close_range.h>
#endif

static int set_cloexec(int fd) {
  int flags = fcntl(fd, F_GETFD);
  if (flags == -1) return -1;
  if (flags & FD_CLOEXEC) return 0;
  return fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

static napi_value throw_errno(napi_env env, const char* what, int err) {
  char message[160];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_throw_error(env, NULL, message);
  return NULL;
}

static int fd_argument(napi_env env, napi_callback_info info, int32_t* fd) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return -1;
  if (napi_get_value_int32(env, argv[0], fd) != napi_ok || *fd < 0) return -1;
  return 0;
}

// setCloseOnExec(fd): flag one descriptor.
static napi_value set_close_on_exec(napi_env env, napi_callback_info info) {
  int32_t fd;
  if (fd_argument(env, info, &fd) != 0) {
    napi_throw_type_error(env, NULL, "setCloseOnExec(fd): fd must be a non-negative integer");
    return NULL;
  }
  if (set_cloexec(fd) == -1) return throw_errno(env, "fcntl(F_SETFD)", errno);
  return NULL;
}

// setCloseOnExecFrom(lowest): flag every open descriptor >= lowest.
static napi_value set_close_on_exec_from(napi_env env, napi_callback_info info) {
  int32_t lowest;
  if (fd_argument(env, info, &lowest) != 0) {
    napi_throw_type_error(env, NULL, "setCloseOnExecFrom(fd): fd must be a non-negative integer");
    return NULL;
  }
#if defined(__linux__) && defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
  if (syscall(SYS_close_range, (unsigned int)lowest, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return NULL;
#endif
  // Older kernels: every descriptor listed in /proc/self/fd (or /dev/fd), gaps included.
  DIR* dir = opendir("/proc/self/fd");
  if (dir == NULL) dir = opendir("/dev/fd");
  if (dir == NULL) return throw_errno(env, "opendir(/proc/self/fd)", errno);
  int own = dirfd(dir);
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    char* end;
    long fd = strtol(entry->d_name, &end, 10);
    if (*end != '\0' || end == entry->d_name || fd < lowest || fd == own) continue;
    set_cloexec((int)fd);  // one that closed meanwhile (EBADF) needs nothing
  }
  closedir(dir);
  return NULL;
}

// The bytes written by one write(2) (send(2) with `socket`: never SIGPIPE, never blocking) of a
// Uint8Array's bytes, or -errno. For a keystroke and its echo, whose path Node's write wrappers
// lengthen by microseconds (docs/design.md § The path of a keystroke); the caller queues what is
// left through Node's own stream, so order and errors take Node's path.
static napi_value write_bytes(napi_env env, napi_callback_info info, int socket) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd;
  napi_typedarray_type type;
  size_t length;
  void* data;
  napi_value result;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 ||
      napi_get_typedarray_info(env, argv[1], &type, &length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "write(fd, bytes): fd must be a non-negative integer and bytes a Uint8Array");
    return NULL;
  }
  ssize_t n;
  do {
    n = socket ? send(fd, data, length, MSG_NOSIGNAL | MSG_DONTWAIT) : write(fd, data, length);
  } while (n == -1 && errno == EINTR);
  napi_create_int32(env, n == -1 ? -errno : (int32_t)n, &result);
  return result;
}

static napi_value write_some(napi_env env, napi_callback_info info) { return write_bytes(env, info, 0); }
static napi_value send_some(napi_env env, napi_callback_info info) { return write_bytes(env, info, 1); }

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"setCloseOnExec", NULL, set_close_on_exec, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setCloseOnExecFrom", NULL, set_close_on_exec_from, NULL, NULL, NULL, napi_enumerable, NULL},
      {"writeSome", NULL, write_some, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sendSome", NULL, send_some, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}

NAPI_MODULE_INIT() { return init(env, exports); }
