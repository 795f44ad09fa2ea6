# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "etc"
require "json"
require "rbconfig"

# Heron::Profiler::CPUClock against the kernel's own thread clock: it may skip the system call
# only while the thread stays on the CPU, so every way of leaving it (sleeping, waiting for
# the GVL, being preempted, forking) is tried here.
class CPUClockTest < Minitest::Test
  CLOCK = Process::CLOCK_THREAD_CPUTIME_ID
  LIB = File.expand_path("../../../lib", __dir__)

  def kernel_ms = Process.clock_gettime(CLOCK, :float_millisecond)

  def burn(ms)
    started = kernel_ms
    nil while kernel_ms - started < ms
  end

  # How much each clock advanced over the block: [CPUClock, kernel's thread clock].
  def advance
    ours, theirs = Heron::Profiler::CPUClock.now, kernel_ms
    yield
    [Heron::Profiler::CPUClock.now - ours, kernel_ms - theirs]
  end

  def glibc_with_rseq?
    version = Etc.confstr(Etc::CS_GNU_LIBC_VERSION).to_s[/\d+\.\d+/] if defined?(Etc::CS_GNU_LIBC_VERSION)
    !version.nil? && Gem::Version.new(version) >= Gem::Version.new("2.35")
  end

  def test_mode_uses_rseq_where_glibc_registers_it
    expected = RUBY_PLATFORM.include?("linux") && glibc_with_rseq? ? :rseq : :syscall
    assert_equal expected, Heron::Profiler::CPUClock.mode
  end

  def test_follows_the_kernel_clock_while_running
    ours, theirs = advance { burn(50) }
    assert_in_delta theirs, ours, 1.0 + theirs * 0.02
  end

  def test_many_close_reads_never_go_back
    readings = Array.new(10_000) { Heron::Profiler::CPUClock.now }
    assert_equal readings.sort, readings
  end

  # Each stretch is shorter than the 1 ms CPUClock may extrapolate from one system call: only
  # the kernel's word that the thread left the CPU keeps the wall time out of it.
  def test_a_sleep_is_not_cpu_time
    ours, theirs = stretches(20) { sleep 0.0005 }.transpose.map(&:max)
    assert_operator theirs, :<, 0.25
    assert_operator ours, :<, 0.25
  end

  def test_waiting_for_another_thread_is_not_cpu_time
    jobs, done = Queue.new, Queue.new
    worker = Thread.new { while jobs.pop; burn(0.5); done << true; end }
    ours, = stretches(20) { jobs << true; done.pop }.transpose.map(&:max)
    assert_operator ours, :<, 0.25
  ensure
    jobs&.close
    worker&.join
  end

  # The two clocks' advances over each of `times` runs of the block.
  def stretches(times, &block)
    Array.new(times) { advance(&block) }
  end

  def test_each_thread_reads_its_own_clock
    results = Array.new(2) { Thread.new { advance { burn(30) } } }.map(&:value)
    results.each { |ours, theirs| assert_in_delta theirs, ours, 1.5 + theirs * 0.02 }
  end

  def test_a_forked_child_reads_its_own_clock
    burn(100)
    Heron::Profiler::CPUClock.now
    reader, writer = IO.pipe
    pid = fork do
      writer.write(JSON.generate([Heron::Profiler::CPUClock.now, kernel_ms]))
      exit!(0)
    end
    writer.close
    ours, theirs = JSON.parse(reader.read)
    Process.wait(pid)
    assert_in_delta theirs, ours, 2.0
  end

  # A process sharing one CPU with a busy loop is preempted about half the time; the clock
  # must count only the half it ran (the wall clock shows the preemption happened). The child
  # reads in 2 ms stretches and sums how far each stretch's reading is from the kernel's.
  def test_preemption_is_not_cpu_time
    skip "needs taskset (util-linux)" unless system("taskset -c 0 true", err: File::NULL)
    hog = Process.spawn("taskset", "-c", "0", RbConfig.ruby, "-e", "loop {}")
    difference, cpu, wall = measure_pinned
    assert_operator wall, :>, cpu * 1.4, "the busy loop did not share the CPU"
    assert_operator difference, :<, 2.0 + cpu * 0.1
  ensure
    Process.kill(:KILL, hog) if hog
    Process.wait(hog) if hog
  end

  def measure_pinned
    script = <<~RUBY
      require "heron"; require "json"
      clock = Process::CLOCK_THREAD_CPUTIME_ID
      sleep 0.2
      wall = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_millisecond) }
      sums = [0.0, 0.0, 0.0]
      200.times do
        o, k, w = Heron::Profiler::CPUClock.now, Process.clock_gettime(clock, :float_millisecond), wall.call
        nil while wall.call - w < 2
        ours, theirs = Heron::Profiler::CPUClock.now - o, Process.clock_gettime(clock, :float_millisecond) - k
        sums[0] += (ours - theirs).abs
        sums[1] += theirs
        sums[2] += wall.call - w
      end
      print JSON.generate(sums)
    RUBY
    JSON.parse(IO.popen(["taskset", "-c", "0", RbConfig.ruby, "-I", LIB, "-e", script], &:read))
  end
end
