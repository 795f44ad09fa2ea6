# frozen_string_literal: true

# Builds the profiler's C classes (Heron::Profiler::RequestProfile, FiberAccounting, Middleware,
# Store, CPUClock) as heron/profiler_ext, apart from the core extension (ext/heron), so nothing
# of the profiler is loaded unless profiling or metrics are on.
# HERON_SANITIZE works as in ext/heron/extconf.rb.
require "mkmf"

require_relative "../heron/compiler_flags"

create_makefile("heron/profiler_ext")
