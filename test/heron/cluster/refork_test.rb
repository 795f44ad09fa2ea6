# frozen_string_literal: true

require "test_helper"
require "net/http"

# Reforking (`refork_after`): a real cluster promotes a warmed worker to mold and replaces its
# workers with ones forked from it, while a client keeps sending requests; TERM still ends it all.
class ClusterReforkTest < Minitest::Test
  # `$lineage` lists the processes that served requests, in the memory forks inherit: a worker
  # forked from a mold reports the mold (the last process before it that served) as its origin;
  # one forked from the master (which serves nothing) reports 0.
  APP = <<~RUBY
    run lambda { |env|
      ($lineage ||= []) << Process.pid unless $lineage&.last == Process.pid
      [200, { "content-type" => "text/plain" }, ["\#{Process.pid} \#{Process.ppid} \#{$lineage[-2].to_i}"]]
    }
  RUBY

  def get(port)
    Net::HTTP.get(URI("http://127.0.0.1:#{port}/")).split.map(&:to_i)
  end

  # Requests one after another until stopped; the answers, and any error.
  def client(port)
    answers = []
    errors = []
    stop = false
    thread = Thread.new do
      until stop
        begin
          answers << get(port)
        rescue StandardError => e
          errors << e
        end
      end
    end
    [answers, errors, -> { stop = true; thread.join }]
  end

  def mold_pid(log, generation)
    File.read(log)[/mold generation #{generation} ready \(pid (\d+)\)/, 1]&.to_i
  end

  def test_workers_are_reforked_from_the_warmed_worker_after_n_requests_and_requests_keep_being_answered
    master, port, log = spawn_heron(APP, "-w", "2", "--preload", "--refork-after", "30")
    answers, errors, finish = client(port)
    mold = eventually { mold_pid(log, 1) }
    # every worker serving now was forked from the mold (it inherited the mold's warm state) and
    # is the master's child (the subreaper adopted it when the intermediate child exited)
    reforked = eventually do
      now = Array.new(20) { get(port) }
      now.map(&:first).uniq if now.all? { |_, _, origin| origin == mold } && now.map(&:first).uniq.size == 2
    end
    eventually { File.read(log).include?("refork done: every worker is forked from mold generation 1") }
    finish.call
    assert_empty errors
    assert_operator answers.size, :>, 30
    reforked.each { |pid| assert_equal master, parent_pid(pid) }
    assert_equal master, parent_pid(mold)
    assert_includes File.read("/proc/#{mold}/cmdline"), "mold"
    Process.kill("TERM", master)
    assert wait_exit(master)&.success?
    ([mold] + reforked).each { |pid| eventually { exited?(pid) } }
  end

  def test_refork_on_demand_promotes_a_new_mold_and_ends_the_old_one
    master, port, log = spawn_heron(APP, "-w", "2", "--preload", "--refork-after", "0")
    answers, errors, finish = client(port)
    eventually { answers.size > 10 }
    refute mold_pid(log, 1), "refork_after 0 reforks only when asked"
    Process.kill("URG", master)
    first = eventually { mold_pid(log, 1) }
    eventually { Array.new(10) { get(port) }.all? { |_, _, origin| origin == first } }
    # a refork asked for while one is under way is ignored (and logged): ask once this one is done
    eventually { File.read(log).include?("refork done: every worker is forked from mold generation 1") }
    Process.kill("URG", master)
    second = eventually { mold_pid(log, 2) }
    refute_equal first, second
    eventually { exited?(first) }
    eventually { Array.new(10) { get(port) }.all? { |_, _, origin| origin == second } }
    eventually { File.read(log).include?("mold generation 2") && File.read(log).include?("refork done: every worker is forked from mold generation 2") }
    finish.call
    assert_empty errors
    Process.kill("TERM", master)
    assert wait_exit(master)&.success?
    eventually { exited?(second) }
  end

  def test_a_single_worker_is_reforked_and_the_log_says_when_it_is_done
    master, port, log = spawn_heron(APP, "-w", "1", "--preload", "--refork-after", "0")
    eventually { get(port) }
    Process.kill("URG", master)
    mold = eventually { mold_pid(log, 1) }
    eventually { File.read(log).include?("refork done: every worker is forked from mold generation 1") }
    assert_equal mold, get(port)[2], "the worker serving now was forked from the mold"
    Process.kill("TERM", master)
    assert wait_exit(master)&.success?
    eventually { exited?(mold) }
  end
end
