{
  "targets": [
    {
      "target_name": "fd_pass",
      "sources": ["fd_pass.c"],
      "cflags": ["-O2", "-Wall"]
    }
  ]
}
