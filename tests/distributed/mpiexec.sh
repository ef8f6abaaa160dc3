#!/bin/sh
# Runs its arguments, an mpiexec command line (tests/CMakeLists.txt: the distributed tests). Open MPI refuses to
# start as root unless told; as root (a container, CI), these two variables are its documented way to tell it (the
# same as --allow-run-as-root), and other MPIs ignore them. As any other user nothing is added.
if [ "$(id -u)" -eq 0 ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
exec "$@"
