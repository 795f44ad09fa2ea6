# frozen_string_literal: true

# Builds the profiler's C classes (Heron::Profiler::RequestProfile, FiberAccounting, Middleware,
# Store, CPUClock) as heron/profiler_ext, apart from the core extension (ext/heron), so nothing
# of the profiler is loaded unless profiling or metrics are on.
# HERON_SANITIZE works as in ext/heron/extconf.rb. In the repository it builds with the server's
# flags (ext/heron/compiler_flags.rb: warnings, sanitizers); an installed gem with mkmf's own.
require "mkmf"

flags = File.expand_path("../../../ext/heron/compiler_flags.rb", __dir__)
require flags if File.file?(flags)

# The Meter's one pass over a request's env: libruby's iteration without rb_hash_foreach's
# re-entrancy guard (rb_ensure and a check after every entry, about 55 instructions an entry),
# where there is one; profiler_meter.c falls back to rb_hash_foreach.
have_func("rb_hash_stlike_foreach", "ruby.h")

create_makefile("heron/profiler_ext")
