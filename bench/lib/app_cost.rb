# frozen_string_literal: true

require "json"
require "open3"
require "rbconfig"

module Bench
  # What an app costs with no server: a separate Ruby process (YJIT on or off) loads the rackup
  # file, builds one Rack env, warms up, then calls the app and iterates and closes its body in a
  # loop, and reports CPU microseconds and objects allocated per call. A server's CPU per request
  # minus this is the server's own cost (bench/run.rb).
  module AppCost
    ROOT = File.expand_path("../..", __dir__)
    # Runs inside the child: ARGV = rackup path, calls.
    LOOP = <<~RUBY
      require "rack"
      require "json"
      app = Rack::Builder.parse_file(ARGV[0])
      app = app.first if app.is_a?(Array) # Rack 2 returns [app, options]
      env = Rack::MockRequest.env_for("http://127.0.0.1/")
      call = lambda do
        _status, _headers, body = app.call(env)
        body.each { |chunk| chunk.bytesize }
        body.close if body.respond_to?(:close)
      end
      calls = Integer(ARGV[1])
      (calls / 2).times { call.call } # warm-up (and YJIT compilation)
      GC.start
      objects = GC.stat(:total_allocated_objects)
      gc_ms = GC.stat(:time)
      started = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
      calls.times { call.call }
      cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - started
      puts JSON.generate("us" => cpu * 1e6 / calls, "objects" => (GC.stat(:total_allocated_objects) - objects).fdiv(calls),
                         "gc_us" => (GC.stat(:time) - gc_ms) * 1e3 / calls, "yjit" => defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?)
    RUBY

    module_function

    # @param app [String] rackup path relative to the repository.
    # @param yjit [Boolean]
    # @param calls [Integer] measured calls (as many again to warm up).
    # @param cpu [Integer, nil] the CPU to pin the loop to (taskset), as the servers are.
    # @return [Hash] "us" (CPU µs per call), "objects", "gc_us", "yjit" (checked in the child).
    def measure(app, yjit:, calls: 20_000, cpu: nil)
      argv = [*(cpu ? ["taskset", "-c", cpu.to_s] : []), RbConfig.ruby, *(yjit ? ["--yjit"] : []), "-e", LOOP, File.join(ROOT, app), calls.to_s]
      out, status = Open3.capture2(*argv, chdir: ROOT)
      raise "app cost loop failed for #{app}" unless status.success?

      result = JSON.parse(out.lines.last)
      raise "YJIT #{yjit ? 'off' : 'on'} in the app cost loop, expected #{yjit ? 'on' : 'off'}" unless result["yjit"] == yjit

      result
    end
  end
end
