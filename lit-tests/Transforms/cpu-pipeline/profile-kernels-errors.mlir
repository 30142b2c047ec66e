// RUN: %mlax-opt --mlax-profile-kernels --verify-diagnostics %s

// A module whose kernels are timed already is refused (a second pass would time the timers).

// expected-error@+1 {{mlax-profile-kernels: the module's kernels are timed already}}
module attributes {mlax.profile_kernels = []} {
  func.func @jit.f(%out: memref<2xf32>) {
    return
  }
}
