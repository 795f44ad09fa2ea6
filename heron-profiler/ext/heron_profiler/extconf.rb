# frozen_string_literal: true

# Builds the profiler's C classes (Heron::Profiler::RequestProfile, FiberAccounting, Middleware,
# Store, CPUClock) as heron/profiler_ext, apart from the core extension (ext/heron), so nothing
# of the profiler is loaded unless profiling or metrics are on.
# HERON_SANITIZE works as in ext/heron/extconf.rb. In the repository it builds with the server's
# flags (ext/heron/compiler_flags.rb: warnings, sanitizers); an installed gem with mkmf's own.
require "mkmf"

flags = File.expand_path("../../../ext/heron/compiler_flags.rb", __dir__)
require flags if File.file?(flags)

create_makefile("heron/profiler_ext")
