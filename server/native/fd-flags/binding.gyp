{
  "targets": [
    {
      "target_name": "fd_flags",
      "sources": ["fd_flags.c"],
      "cflags": ["-O2", "-Wall"]
    }
  ]
}
