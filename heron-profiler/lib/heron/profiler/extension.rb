# frozen_string_literal: true

module Heron
  module Profiler
    # Where the profiler's C extension is (see below for how it gets built).
    module Extension
      LIBRARY = "heron/profiler_ext"
    end
  end
end

# The profiler's C extension (ext/heron_profiler). An installed gem has it, built by its extconf at
# `gem install`. A source checkout of the Heron repository used through Bundler's `path:` does not
# (Bundler never compiles path gems): there the repository's builder, beside this gem in the same
# checkout (lib/heron/native.rb), compiles it once on first use, as it does the server's.
begin
  require Heron::Profiler::Extension::LIBRARY
rescue LoadError => e
  raise unless e.path.nil? || e.path == Heron::Profiler::Extension::LIBRARY
  checkout_builder = File.expand_path("../../../../lib/heron/native.rb", __dir__)
  unless File.file?(checkout_builder)
    raise LoadError, "heron-profiler: its C extension heron/profiler_ext is not built (#{e.message}); " \
                     "reinstall the gem with a C compiler, make and Ruby's headers (apt-get install build-essential ruby-dev)"
  end
  require checkout_builder
  Heron::Native.load("profiler_ext", root: File.expand_path("../../..", __dir__))
end
