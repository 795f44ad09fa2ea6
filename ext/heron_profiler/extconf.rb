# frozen_string_literal: true

# Builds the profiler's C classes (Heron::Profiler::RequestProfile, FiberAccounting, Middleware,
# Store, CPUClock) as heron/profiler_ext, apart from the core extension (ext/heron), so nothing
# of the profiler is loaded unless profiling or metrics are on.
# HERON_SANITIZE works as in ext/heron/extconf.rb.
require "mkmf"

$CFLAGS << " -O2 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers"

sanitize = ENV.fetch("HERON_SANITIZE", "").strip
unless sanitize.empty?
  sanitize = "address,undefined" if sanitize == "address"
  flags = " -fsanitize=#{sanitize} -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g"
  $CFLAGS << flags
  $LDFLAGS << flags
end

create_makefile("heron/profiler_ext")
