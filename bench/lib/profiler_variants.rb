# frozen_string_literal: true

module Bench
  # What bench/profiler_overhead.rb and bench/profiler_instructions.rb compare: the same hello
  # world served with profiling off, on, and on with one request in ten measured.
  module ProfilerVariants
    HELLO = File.expand_path("../profiler_hello.ru", __dir__)
    FLAGS = { "off" => ["--no-profile"], "on" => ["--profile"],
              "on, 1 in 10 sampled" => ["--profile", "--profile-sample", "10"] }.freeze
  end
end
