# frozen_string_literal: true

require "test_helper"
require "stringio"
require "tempfile"
require "heron/attack"
require_relative "support/test_server"

class LauncherTest < Minitest::Test
  def launch(argv, output: nil)
    options = Heron::Attack::Options.parse(argv)
    targets = [Heron::Attack::Target.new("GET", options.url)]
    Heron::Attack::Launcher.new(options, targets, output: output).run
  end

  def test_processes_interleave_and_merge
    Tempfile.create("lines") do |file|
      file.sync = true
      recorder = TestServer.fork_server do |base|
        launch(["#{base}/", "-r", "100", "-n", "100", "--processes", "2", "-c", "4", "--per-request"], output: file)
      end
      assert_equal({ 200 => 100 }, recorder.statuses)
      assert_equal 100, recorder.corrected.count
      achieved = (recorder.sent - 1) / (recorder.last_sent - recorder.start)
      assert_operator achieved, :<=, 101, "interleaved due times never run ahead of the plan"
      assert_in_delta 100, achieved, 2 if recorder.lateness.percentile(99) <= 10_000 # unless the box was starved
      numbers = File.readlines(file.path).map { |line| line[/\Arequest (\d+) /, 1].to_i }
      assert_equal (1..100).to_a, numbers.sort
    end
  end

  def test_single_process_output_is_off_without_per_request
    output = StringIO.new
    recorder = TestServer.fork_server { |base| launch(["#{base}/", "-r", "100", "-n", "5"], output: output) }
    assert_equal 5, recorder.sent
    assert_empty output.string
  end

  # 100 slow requests in flight need more than the 64 descriptors this process starts with.
  def test_the_soft_open_file_limit_is_raised_to_the_hard_one
    TestServer.fork_server(delay: 0.5) do |base|
      code = "require 'heron/attack'; exit Heron::Attack::CLI.new(ARGV).run"
      output = IO.popen([RbConfig.ruby, "-Ilib", "-e", code, "--", "#{base}/", "-r", "200", "-n", "100"],
                        rlimit_nofile: [64, Process.getrlimit(:NOFILE).last], err: %i[child out], &:read)
      assert_match(/responses 100 +errors 0 /, output)
    end
  end

  # A Ctrl-C that comes before the generators exist (a loaded machine can take longer than the
  # user to fork them) still stops the run: nothing is sent instead of the whole 50 s plan.
  def test_a_stop_before_the_generators_exist_still_stops_the_run
    TestServer.fork_server do |base|
      [%w[--processes 1], %w[--processes 2]].each do |processes|
        options = Heron::Attack::Options.parse(["#{base}/", "-r", "20", "-n", "1000", *processes])
        launcher = Heron::Attack::Launcher.new(options, [Heron::Attack::Target.new("GET", options.url)])
        launcher.stop
        assert_equal 0, launcher.run.sent, processes.join(" ")
      end
    end
  end

  def test_a_failing_process_is_reported
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
    recorder = launch(["http://127.0.0.1:#{port}/", "-r", "50", "-n", "4", "--processes", "2"])
    assert_equal 4, recorder.errors["refused"]
    launcher = Heron::Attack::Launcher.new(Heron::Attack::Options.parse(%w[http://h/ -r 1 -n 1]), [])
    reader, writer = IO.pipe
    pid = fork { writer.write(Marshal.dump("RuntimeError: boom")) && exit!(0) }
    writer.close
    assert_raises(RuntimeError) { launcher.send(:collect, pid, reader) }
  end
end

class LauncherProgressTest < Minitest::Test
  # A StringIO that says it is a terminal.
  class FakeTTY < StringIO
    def tty? = true
  end

  def test_multi_process_progress_is_relayed
    io = FakeTTY.new
    options = Heron::Attack::Options.parse(%w[http://127.0.0.1:1/ -r 8 -n 12 --processes 2])
    recorder = TestServer.fork_server do |base|
      options.url = "#{base}/"
      progress = Heron::Attack::Progress.for(io, total: 12)
      Heron::Attack::Launcher.new(options, [Heron::Attack::Target.new("GET", options.url)], progress: progress).run
    end
    assert_equal 12, recorder.sent
    assert_match %r{sent \d+/12  rate }, io.string
    assert io.string.end_with?("\r\e[K")
  end
end
