// Descriptors handed between two processes of one user over a Unix socket (docs/design.md, The
// session host serves the streams): SCM_RIGHTS on an AF_UNIX SOCK_SEQPACKET socket, so each
// message keeps its bounds and its descriptors, plus the peer's uid (SO_PEERCRED) and a libuv
// poll to learn when a socket is readable. Node cannot do any of this for an unrelated process.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>
#include <node_api.h>
#include <uv.h>

// At most this many descriptors travel in one message (one stream socket per handover needs 1).
#define MAX_FDS 16
// At most this many bytes of data in one message (the connection's parameters and its first bytes).
#define MAX_MESSAGE_BYTES (64 * 1024)

static napi_value throw_errno(napi_env env, const char* what, int err) {
  char code[32];
  char message[200];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  snprintf(code, sizeof code, "E%d", err);
  napi_value error, msg, errno_value;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg);
  napi_create_error(env, NULL, msg, &error);
  napi_create_int32(env, err, &errno_value);
  napi_set_named_property(env, error, "errno", errno_value);
  napi_value code_value;
  const char* name = err == EAGAIN ? "EAGAIN" : err == ENOENT ? "ENOENT" : err == ECONNREFUSED ? "ECONNREFUSED" : err == EPIPE ? "EPIPE" : err == EBADF ? "EBADF" : err == EADDRINUSE ? "EADDRINUSE" : code;
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code_value);
  napi_set_named_property(env, error, "code", code_value);
  napi_throw(env, error);
  return NULL;
}

static int get_args(napi_env env, napi_callback_info info, size_t want, napi_value* argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) return -1;
  return 0;
}

static int get_fd(napi_env env, napi_value value, int* fd) {
  int32_t v;
  if (napi_get_value_int32(env, value, &v) != napi_ok || v < 0) return -1;
  *fd = v;
  return 0;
}

static int get_path(napi_env env, napi_value value, struct sockaddr_un* addr) {
  size_t len;
  memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  if (napi_get_value_string_utf8(env, value, addr->sun_path, sizeof addr->sun_path, &len) != napi_ok) return -1;
  if (len == 0 || len >= sizeof addr->sun_path - 1) return -1;
  return 0;
}

// The one argument of a call that takes a descriptor; throws a TypeError naming `call` otherwise.
static int fd_argument(napi_env env, napi_callback_info info, const char* call, int* fd) {
  napi_value argv[1];
  if (get_args(env, info, 1, argv) == 0 && get_fd(env, argv[0], fd) == 0) return 0;
  char message[96];
  snprintf(message, sizeof message, "%s(fd): fd must be a non-negative integer", call);
  napi_throw_type_error(env, NULL, message);
  return -1;
}

// The one argument of a call that takes a socket path; throws a TypeError naming `call` otherwise.
static int path_argument(napi_env env, napi_callback_info info, const char* call, struct sockaddr_un* addr) {
  napi_value argv[1];
  if (get_args(env, info, 1, argv) == 0 && get_path(env, argv[0], addr) == 0) return 0;
  char message[96];
  snprintf(message, sizeof message, "%s(path): path must be a short non-empty string", call);
  napi_throw_type_error(env, NULL, message);
  return -1;
}

static napi_value int_value(napi_env env, int v) {
  napi_value out;
  napi_create_int32(env, v, &out);
  return out;
}

// listen(path): a non-blocking SOCK_SEQPACKET socket listening at path, created 0600.
static napi_value do_listen(napi_env env, napi_callback_info info) {
  struct sockaddr_un addr;
  if (path_argument(env, info, "listen", &addr) != 0) return NULL;
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  mode_t old = umask(0077);  // private from its first moment
  int rc = bind(fd, (struct sockaddr*)&addr, sizeof addr);
  int err = errno;
  umask(old);
  if (rc != 0) {
    close(fd);
    return throw_errno(env, "bind", err);
  }
  if (chmod(addr.sun_path, 0600) != 0 || listen(fd, 16) != 0) {
    err = errno;
    close(fd);
    return throw_errno(env, "listen", err);
  }
  return int_value(env, fd);
}

// accept(fd): a connected non-blocking socket, or -1 when none is waiting.
static napi_value do_accept(napi_env env, napi_callback_info info) {
  int fd;
  if (fd_argument(env, info, "accept", &fd) != 0) return NULL;
  int conn = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (conn < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED || errno == EINTR) return int_value(env, -1);
    return throw_errno(env, "accept", errno);
  }
  return int_value(env, conn);
}

// connect(path): a non-blocking SOCK_SEQPACKET socket connected to path.
static napi_value do_connect(napi_env env, napi_callback_info info) {
  struct sockaddr_un addr;
  if (path_argument(env, info, "connect", &addr) != 0) return NULL;
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  // Blocking connect: on a Unix socket it completes at once or fails (no listener, backlog full).
  if (connect(fd, (struct sockaddr*)&addr, sizeof addr) != 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "connect", err);
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags == -1 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
    int err = errno;
    close(fd);
    return throw_errno(env, "fcntl", err);
  }
  return int_value(env, fd);
}

// peerUid(fd): the uid of the process at the other end (SO_PEERCRED), as the kernel saw it at connect.
static napi_value peer_uid(napi_env env, napi_callback_info info) {
  int fd;
  if (fd_argument(env, info, "peerUid", &fd) != 0) return NULL;
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return throw_errno(env, "getsockopt(SO_PEERCRED)", errno);
  napi_value out;
  napi_create_uint32(env, cred.uid, &out);
  return out;
}

// sendFds(fd, fds, bytes): one message with these descriptors attached; returns the bytes sent.
// The caller's descriptors stay open (the receiver gets its own copies).
static napi_value send_fds(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  int fd;
  bool is_array;
  if (get_args(env, info, 3, argv) != 0 || get_fd(env, argv[0], &fd) != 0 || napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array) {
    napi_throw_type_error(env, NULL, "sendFds(fd, fds, bytes): fd an integer, fds an array of integers, bytes a Uint8Array");
    return NULL;
  }
  uint32_t count;
  napi_get_array_length(env, argv[1], &count);
  if (count > MAX_FDS) {
    napi_throw_range_error(env, NULL, "sendFds: too many descriptors in one message");
    return NULL;
  }
  int fds[MAX_FDS];
  for (uint32_t i = 0; i < count; i++) {
    napi_value item;
    napi_get_element(env, argv[1], i, &item);
    if (get_fd(env, item, &fds[i]) != 0) {
      napi_throw_type_error(env, NULL, "sendFds: every descriptor must be a non-negative integer");
      return NULL;
    }
  }
  void* data = NULL;
  size_t length = 0;
  bool is_typed;
  napi_is_typedarray(env, argv[2], &is_typed);
  if (!is_typed) {
    napi_throw_type_error(env, NULL, "sendFds: bytes must be a Uint8Array");
    return NULL;
  }
  napi_typedarray_type type;
  napi_get_typedarray_info(env, argv[2], &type, &length, &data, NULL, NULL);
  if (type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "sendFds: bytes must be a Uint8Array");
    return NULL;
  }
  if (length == 0 || length > MAX_MESSAGE_BYTES) {
    napi_throw_range_error(env, NULL, "sendFds: a message carries 1 byte to 64 KiB of data");
    return NULL;
  }
  struct iovec iov = {data, length};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
  } control;
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (count > 0) {
    memset(&control, 0, sizeof control);
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * count);
    struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * count);
    memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * count);
  }
  ssize_t sent;
  do sent = sendmsg(fd, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent < 0) return throw_errno(env, "sendmsg", errno);
  return int_value(env, (int)sent);
}

static void close_all(const int* fds, int count) {
  for (int i = 0; i < count; i++) close(fds[i]);
}

// receiveFds(fd): the next message as {data, fds}, null when none is waiting, false at the end of
// the connection. Descriptors arrive close-on-exec. A message whose data or descriptors did not fit
// (or that carries anything but descriptors) is dropped whole: its descriptors are closed here and
// the answer is {data, fds: [], dropped: true}, so garbage never leaks a descriptor.
static napi_value receive_fds(napi_env env, napi_callback_info info) {
  int fd;
  if (fd_argument(env, info, "receiveFds", &fd) != 0) return NULL;
  char* data = malloc(MAX_MESSAGE_BYTES);
  if (data == NULL) return throw_errno(env, "malloc", ENOMEM);
  struct iovec iov = {data, MAX_MESSAGE_BYTES};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
  } control;
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  ssize_t got;
  do got = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  if (got < 0) {
    int err = errno;
    free(data);
    if (err == EAGAIN || err == EWOULDBLOCK) {
      napi_value null_value;
      napi_get_null(env, &null_value);
      return null_value;
    }
    return throw_errno(env, "recvmsg", err);
  }
  int fds[MAX_FDS];
  int count = 0;
  bool dropped = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  for (struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != NULL; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
      int n = (int)((cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      int* incoming = (int*)CMSG_DATA(cmsg);
      for (int i = 0; i < n; i++) {
        if (count < MAX_FDS) fds[count++] = incoming[i];
        else {
          close(incoming[i]);
          dropped = true;
        }
      }
    } else {
      dropped = true;  // SCM_CREDENTIALS or anything else: not part of this channel
    }
  }
  if (got == 0 && count == 0 && !dropped) {
    // SOCK_SEQPACKET: a zero-length read is the end of the connection (a sender never sends empty messages)
    free(data);
    napi_value false_value;
    napi_get_boolean(env, false, &false_value);
    return false_value;
  }
  if (dropped) {
    close_all(fds, count);
    count = 0;
  }
  napi_value result, buffer, list, flag;
  void* copy;
  if (napi_create_buffer_copy(env, (size_t)got, data, &copy, &buffer) != napi_ok) {
    free(data);
    close_all(fds, count);
    return NULL;
  }
  free(data);
  napi_create_object(env, &result);
  napi_create_array_with_length(env, count, &list);
  for (int i = 0; i < count; i++) napi_set_element(env, list, i, int_value(env, fds[i]));
  napi_set_named_property(env, result, "data", buffer);
  napi_set_named_property(env, result, "fds", list);
  napi_get_boolean(env, dropped, &flag);
  napi_set_named_property(env, result, "dropped", flag);
  return result;
}

// closeFd(fd): close a descriptor this module gave out (or one received and not used).
static napi_value close_fd(napi_env env, napi_callback_info info) {
  int fd;
  if (fd_argument(env, info, "closeFd", &fd) != 0) return NULL;
  if (close(fd) != 0 && errno != EINTR) return throw_errno(env, "close", errno);
  return NULL;
}

// A readable-watch on a descriptor: libuv polls it and calls back on the loop's thread.
typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
  int closing;
  // freed when both are gone: the libuv handle (closed) and the JavaScript handle (collected)
  int handle_closed;
  int external_collected;
} watch_t;

static void watch_closed(uv_handle_t* handle) {
  watch_t* watch = handle->data;
  watch->handle_closed = 1;
  if (watch->external_collected) free(watch);
}

static void watch_fired(uv_poll_t* poll, int status, int events) {
  watch_t* watch = poll->data;
  if (watch->closing) return;
  napi_env env = watch->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, global, arg, ignored;
  napi_get_reference_value(env, watch->callback, &callback);
  napi_get_global(env, &global);
  napi_create_int32(env, status, &arg);
  napi_make_callback(env, NULL, global, callback, 1, &arg, &ignored);
  napi_close_handle_scope(env, scope);
}

static void watch_finalize(napi_env env, void* data, void* hint) {
  watch_t* watch = data;
  watch->external_collected = 1;
  if (!watch->closing) {
    watch->closing = 1;
    napi_delete_reference(env, watch->callback);
    uv_close((uv_handle_t*)&watch->poll, watch_closed);
  } else if (watch->handle_closed) {
    free(watch);
  }
}

// watchReadable(fd, callback): call callback(status) whenever fd is readable (status < 0: a poll error).
// Returns a handle for unwatch(). The descriptor stays the caller's.
static napi_value watch_readable(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int fd;
  napi_valuetype type;
  if (get_args(env, info, 2, argv) != 0 || get_fd(env, argv[0], &fd) != 0 || napi_typeof(env, argv[1], &type) != napi_ok || type != napi_function) {
    napi_throw_type_error(env, NULL, "watchReadable(fd, callback)");
    return NULL;
  }
  uv_loop_t* loop;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == NULL) {
    napi_throw_error(env, "ENOSYS", "watchReadable: this runtime gives no event loop to poll on");
    return NULL;
  }
  watch_t* watch = calloc(1, sizeof *watch);
  if (watch == NULL) return throw_errno(env, "calloc", ENOMEM);
  int rc = uv_poll_init(loop, &watch->poll, fd);
  if (rc != 0) {
    free(watch);
    napi_throw_error(env, NULL, uv_strerror(rc));
    return NULL;
  }
  watch->poll.data = watch;
  watch->env = env;
  napi_create_reference(env, argv[1], 1, &watch->callback);
  rc = uv_poll_start(&watch->poll, UV_READABLE | UV_DISCONNECT, watch_fired);
  if (rc != 0) {
    watch->closing = 1;
    watch->external_collected = 1;  // no JavaScript handle was made
    napi_delete_reference(env, watch->callback);
    uv_close((uv_handle_t*)&watch->poll, watch_closed);
    napi_throw_error(env, NULL, uv_strerror(rc));
    return NULL;
  }
  napi_value handle;
  napi_create_external(env, watch, watch_finalize, NULL, &handle);
  return handle;
}

// unwatch(handle): stop a watch (before its descriptor is closed). A second call does nothing.
static napi_value unwatch(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  void* data;
  if (get_args(env, info, 1, argv) != 0 || napi_get_value_external(env, argv[0], &data) != napi_ok) {
    napi_throw_type_error(env, NULL, "unwatch(handle)");
    return NULL;
  }
  watch_t* watch = data;
  if (!watch->closing) {
    watch->closing = 1;
    uv_poll_stop(&watch->poll);
    napi_delete_reference(env, watch->callback);
    uv_close((uv_handle_t*)&watch->poll, watch_closed);
  }
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"listen", NULL, do_listen, NULL, NULL, NULL, napi_enumerable, NULL},
      {"accept", NULL, do_accept, NULL, NULL, NULL, napi_enumerable, NULL},
      {"connect", NULL, do_connect, NULL, NULL, NULL, napi_enumerable, NULL},
      {"peerUid", NULL, peer_uid, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sendFds", NULL, send_fds, NULL, NULL, NULL, napi_enumerable, NULL},
      {"receiveFds", NULL, receive_fds, NULL, NULL, NULL, napi_enumerable, NULL},
      {"closeFd", NULL, close_fd, NULL, NULL, NULL, napi_enumerable, NULL},
      {"watchReadable", NULL, watch_readable, NULL, NULL, NULL, napi_enumerable, NULL},
      {"unwatch", NULL, unwatch, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}

NAPI_MODULE_INIT() { return init(env, exports); }
