# frozen_string_literal: true

require_relative "cluster/worker"
require_relative "control"
require_relative "cluster/channel"
require_relative "cluster/memory"
require_relative "cluster/refork"
require_relative "launcher/hot_restart"
require_relative "systemd/notifier"
require_relative "clock"

module Heron
  # The master of forked workers: binds the listeners, optionally loads the app before forking
  # (preload), runs `before_fork`, forks the workers and supervises them:
  #
  # - restarts any that die; kills and replaces one whose heartbeat stopped for `worker_timeout`
  #   (after asking it to log its threads) or that did not start serving within
  #   `worker_boot_timeout`; replaces one above `worker_max_memory` gracefully, one at a time;
  # - TERM/INT: graceful stop (a second one: immediate); QUIT: immediate stop;
  #   USR2: hot restart; USR1: phased restart (without preload); HUP: reopen the log file, here
  #   and in the workers; TTIN/TTOU: one worker more or fewer;
  # - with `refork_after`: promotes a warmed worker to mold and replaces the workers with ones
  #   forked from it (after that many requests, once; URG or `heron ctl refork`: again).
  #
  # Status readers ({#pid}, {#booted_at}, {#restarts}, {#workers}) are what a control endpoint reads.
  class Cluster
    include Clock

    RESPAWN_DELAY = 1.0
    TICK = 0.5
    DUMP_GRACE = 2.0
    MEMORY_CHECK_INTERVAL = 5.0
    SIGNALS = %w[TERM INT QUIT USR1 USR2 HUP TTIN TTOU CHLD].freeze
    private_constant :RESPAWN_DELAY, :TICK, :DUMP_GRACE, :MEMORY_CHECK_INTERVAL, :SIGNALS

    # @return [Integer] the master's pid.
    attr_reader :pid
    # @return [Time, nil] when the master started.
    attr_reader :booted_at
    # @return [Integer] workers started after the first round (crashes, timeouts, replacements).
    attr_reader :restarts
    # @return [Integer] how many workers the master keeps (changed by TTIN/TTOU).
    attr_reader :worker_count

    # @param config [Configuration]
    # @param logger [Log::Logger]
    # @param metrics [#worker_restarted, nil]
    # @param readiness [#ready!, #worker_exited, nil] told once every first worker serves (pidfile,
    #   systemd, handover), and each time a worker exits (the pidfile).
    # @param log_file [Launcher::LogFile, nil] reopened on SIGHUP.
    # @param notifier [Systemd::Notifier]
    def initialize(config, logger, metrics: nil, readiness: nil, log_file: nil, notifier: Systemd::Notifier.new)
      @config = config
      @logger = logger
      @metrics = metrics
      @readiness = readiness
      @log_file = log_file
      @notifier = notifier
      @binder = Binder.for(config)
      @workers = {}
      @signals = []
      @replacements = []
      @worker_count = config.workers
      @restarts = 0
    end

    # @return [Array<Hash>] one status per live worker (see {Worker#status}).
    def workers
      @workers.each_value.map(&:status)
    end

    # Runs until every worker has exited after a stop signal.
    # @return [void]
    def run
      boot
      supervise
    ensure
      @control&.close
      @exporter&.stop
      @binder.close
    end

    # @return [Boolean] whether a stop signal arrived (the control listener's readiness says 503).
    def draining? = !@stopping.nil?

    # @return [Hash] the master's counts for the control listener's stats document.
    def stats
      { workers: @workers.size, worker_pids: @workers.keys, restarts: @restarts,
        parked_connections: @workers.each_value.sum(&:parked), mold_pid: @refork&.mold&.pid,
        requests_by_worker: @workers.transform_values(&:served) }
    end

    private

    def boot
      @pid = Process.pid
      @booted_at = Time.now
      listeners = @binder.bind
      start_metrics if @config.metrics?
      @control = Control.for_cluster(self, listeners, @config, @logger, @exporter&.aggregate)
      app = @config.preload ? AppLoader.load(@config) : nil
      @logger.banner(addresses: @binder.addresses, mode: mode, control: @control.url)
      Control::ProcessTitle.set("master", @config, @binder.addresses)
      @binder.ignored.each { |uri| @logger.info("bind #{uri} ignored: serving the sockets systemd passed") }
      @config.before_fork.each(&:call)
      start(listeners, app)
    end

    def mode
      "cluster, #{@config.workers} workers#{' (preloaded)' if @config.preload}, " \
        "#{@config.threads} reactor thread#{'s' if @config.threads > 1} and up to " \
        "#{@config.max_connections} connections each"
    end

    # Workers publish their counters to a shared directory; the master serves the totals.
    def start_metrics
      require_relative "metrics/cluster_exporter"
      @exporter = Metrics::ClusterExporter.new(@config).start
      @metrics ||= @exporter.local
    end

    def start(listeners, app)
      @alive_reader, @alive_writer = IO.pipe
      @wake_reader, @wake_writer = IO.pipe
      @channel = Channel.new
      @template = ->(index) { Worker.new(index, @config, @logger, listeners, app, exporter: @exporter) }
      # Trapped before the first fork: a stop that arrives while workers are being forked (a
      # hot restart cancelled during boot) is queued, not an exception in the middle of a fork.
      SIGNALS.each { |signal| trap(signal) { wake(signal) } }
      start_refork if @config.refork_after
      @worker_count.times { |index| spawn(index) }
    end

    def spawn(index, replaces: nil)
      worker = @template.call(index)
      worker.replaces = replaces
      return if @refork&.order(worker) # forked by the mold: adopted once it says its pid
      # Never while the control thread runs one of its fibers: the child would crash in GC.
      @control.quiesced { worker.spawn(@alive_reader, @channel, close: master_only_ios, hooks: @log_file) }
      @workers[worker.pid] = worker
    end

    # The master's ends of its pipes: a worker holding the alive pipe's write end would never
    # see it close when the master dies.
    def master_only_ios
      [@alive_writer, @wake_reader, @wake_writer, @channel.reader, @hot_restart&.reader, *@readiness&.ios,
       *@workers.each_value.map(&:link), *@refork&.links].compact
    end

    def wake(signal)
      @signals << signal
      @wake_writer.write_nonblock(".", exception: false)
    end

    def supervise
      until @stopping && @workers.empty? && @hot_restart.nil? && @refork&.pids.to_a.empty?
        wait_for_events
        handle(@signals.shift) until @signals.empty?
        reap
        tick
      end
    end

    def wait_for_events
      readers = [@wake_reader, @channel.reader, @hot_restart&.reader].compact
      ready, = IO.select(readers, nil, nil, @stopping ? 0.1 : TICK)
      @wake_reader.read_nonblock(64, exception: false) if ready&.include?(@wake_reader)
      @channel.read.each { |pid, connections, parked, served| heartbeat(pid, connections, parked, served) }
      @channel.notes.each { |kind, *numbers| mold_note(kind, *numbers) } if @refork
      hot_restart_answer if @hot_restart
    end

    def handle(signal)
      case signal
      when "TERM", "INT", "QUIT" then stop(signal)
      when "USR2" then hot_restart
      when "USR1" then phased_restart
      when "HUP" then reopen_logs
      when "TTIN", "TTOU" then resize(signal == "TTIN" ? 1 : -1)
      when "URG" then refork_on_demand
      end
    end

    def stop(signal)
      graceful = signal != "QUIT" && !@stopping
      @stopping = true
      @binder.close_sockets # the workers hold copies: once they close theirs, connecting is refused
      @deadline ||= now + @config.shutdown_timeout + @config.drain_delay + 5
      @notifier.stopping unless @handed_over # the new master is the service now
      @logger.info("#{graceful ? 'graceful' : 'immediate'} stop (SIG#{signal})")
      @hot_restart&.cancel
      @workers.each_value { |worker| worker.signal(graceful ? "TERM" : "QUIT") }
      @refork&.signal(graceful ? "TERM" : "QUIT")
    end

    def heartbeat(pid, connections, parked, served = 0)
      worker = @workers[pid] or return
      first = worker.beat(connections, parked, served)
      serving(worker) if first
      refork(worker, "it answered #{served} requests") if @refork&.due?(served)
    end

    # A worker's first heartbeat: it accepts connections now.
    def serving(worker)
      old = worker.replaces
      worker.replaces = nil
      retire(old, "replaced by pid #{worker.pid}") if old
      next_replacement if !old && @phasing == :refork # a refork's first worker (no one to retire)
      announce_ready if !@announced && @workers.each_value.count(&:serving?) >= @worker_count
    end

    def announce_ready
      @announced = true
      @readiness&.ready!(status)
    end

    def status
      serving = @workers.each_value.count(&:serving?)
      "#{serving}/#{@worker_count} workers serving, #{@workers.each_value.sum(&:connections)} connections"
    end

    def retire(worker, reason)
      return unless @workers.key?(worker.pid)
      @logger.info("worker #{worker.index} (pid #{worker.pid}) #{reason}; draining it")
      worker.retiring = true
      worker.kill_at = now + @config.shutdown_timeout + @config.drain_delay + 5
      worker.signal("TERM")
    end

    def reap
      while (pid, status = Process.wait2(-1, Process::WNOHANG))
        worker = @workers.delete(pid) or (not_a_worker(pid) && next)
        @exporter&.worker_exited(pid)
        @readiness&.worker_exited unless @handed_over
        exited(worker, status)
      end
    rescue Errno::ECHILD
      nil
    end

    def exited(worker, status)
      return next_replacement if worker.retiring
      return if @stopping || worker.index >= @worker_count
      @logger.warn("worker #{worker.index} (pid #{worker.pid}) exited (#{status.inspect}); restarting")
      @metrics&.worker_restarted
      @restarts += 1
      sleep(RESPAWN_DELAY) if now - worker.started_at < RESPAWN_DELAY
      spawn(worker.index, replaces: worker.replaces)
    end

    # Every tick: stop deadlines, hung or slow-booting workers, memory, the watchdog.
    def tick
      force_stop if @stopping && now > @deadline
      @workers.each_value { |worker| check(worker) } unless @stopping
      check_memory unless @stopping
      report_status
    end

    def report_status
      return unless @notifier.watchdog(status: status) || !@status_at || now - @status_at > 5
      @status_at = now
      @notifier.status(status)
    end

    def force_stop
      @hot_restart&.finish(0)
      @workers.each_value { |worker| worker.signal("KILL") }
    end

    def check(worker)
      return worker.signal("KILL") if worker.kill_at && now > worker.kill_at
      return if worker.kill_at
      limit = worker.serving? ? @config.worker_timeout : @config.worker_boot_timeout
      hung(worker, limit) if worker.silent_for > limit
    end

    def hung(worker, limit)
      what = worker.serving? ? "has not ticked" : "has not started serving"
      @logger.error("worker #{worker.index} (pid #{worker.pid}) #{what} for #{limit}s; " \
                    "logging its threads and killing it")
      worker.signal(Cluster::ThreadDump::SIGNAL)
      worker.kill_at = now + DUMP_GRACE
    end

    def check_memory
      limit = @config.worker_max_memory or return
      return if busy_replacing? || (@memory_checked_at && now - @memory_checked_at < MEMORY_CHECK_INTERVAL)
      @memory_checked_at = now
      worker, rss = @workers.values.lazy.select(&:serving?).map { |w| [w, Memory.rss(w.pid) || 0] }
                            .find { |_, bytes| bytes > limit }
      replace(worker, "uses #{rss} bytes, above worker_max_memory #{limit}") if worker
    end

    # Starts a new worker for `worker`'s index; the old one drains once the new one serves.
    def replace(worker, reason)
      @logger.info("worker #{worker.index} (pid #{worker.pid}) #{reason}; starting its replacement")
      @restarts += 1
      spawn(worker.index, replaces: worker)
    end

    def busy_replacing?
      @workers.each_value.any? { |worker| worker.replaces || worker.retiring } || (@refork && !@refork.idle?)
    end

    def phased_restart
      return @logger.warn("SIGUSR1 ignored: phased restart needs preload off (use SIGUSR2)") if @config.preload
      return @logger.warn("SIGUSR1 ignored: a phased restart is under way") unless @replacements.empty?
      @notifier.reloading
      @logger.info("phased restart of #{@workers.size} workers")
      @replacements = @workers.values.reject(&:retiring).sort_by(&:index)
      @phasing = :phased
      next_replacement
    end

    def next_replacement
      return if busy_replacing?
      worker = @replacements.shift
      return phased_restart_done unless worker
      @workers.key?(worker.pid) ? replace(worker, @phasing == :refork ? "refork" : "phased restart") : next_replacement
    end

    # The last replacement of a phased restart or a refork is serving and the one it replaced
    # has exited: said in the log (a refork asked for before this line is ignored).
    def phased_restart_done
      done = @phasing or return
      @phasing = nil
      return @logger.info("refork done: every worker is forked from mold generation #{@refork.generation}") if done == :refork
      @logger.info("phased restart done")
      @notifier.ready(status: status)
    end

    def resize(delta)
      count = @worker_count + delta
      return @logger.warn("SIGTTOU ignored: at least one worker stays") if count < 1
      @worker_count = count
      @logger.info("workers: #{count} (SIG#{delta.positive? ? 'TTIN' : 'TTOU'})")
      return spawn(count - 1) if delta.positive?
      @workers.each_value.select { |worker| worker.index >= count }.each { |worker| retire(worker, "removed") }
    end

    def reopen_logs
      @log_file&.reopen
      @logger.info(@log_file ? "SIGHUP: log file reopened" : "SIGHUP: no log_file to reopen")
      @workers.each_value(&:hangup)
    end

    def hot_restart
      return if Launcher::HotRestart.ignored?(@logger, under_way: !@hot_restart.nil?, stopping: @stopping)
      @hot_restart = Launcher::HotRestart.new(@binder, @control, @notifier, @logger, role: "master").start
    end

    def hot_restart_answer
      answer = @hot_restart.poll or return
      restart = @hot_restart
      @hot_restart = nil
      restart.finish(5) if restart.conclude(answer, status) { handed_over } == :cancelled
    end

    # The new master is the service now: this one drains.
    def handed_over
      @handed_over = true
      stop("TERM")
    end

    # Reforking (`refork_after`): the master becomes a child subreaper before the first fork.
    def start_refork
      @refork = Refork.new(@config.refork_after, @logger)
      trap("URG") { wake("URG") } if @refork.enabled?
    end

    def refork_on_demand
      return @logger.warn("SIGURG ignored: reforking is off (set refork_after)") unless @refork&.enabled?
      worker = @workers.each_value.select(&:serving?).reject(&:retiring).max_by(&:served)
      return @logger.warn("refork ignored: no serving worker to promote") unless worker
      refork(worker, "asked for")
    end

    # Takes `worker` out of the pool to become the mold (it drains; its place is filled once the
    # mold is ready).
    def refork(worker, reason)
      return @logger.warn("refork ignored: the cluster is stopping or replacing workers") if @stopping || busy_replacing?
      @logger.info("refork (#{reason}): worker #{worker.index} (pid #{worker.pid}) becomes the mold")
      @workers.delete(worker.pid) if @refork.promote(worker)
    end

    def mold_note(kind, *numbers)
      case kind
      when "mold" then mold_ready(numbers.first)
      when "adopt" then adopt(*numbers)
      end
    end

    # The new mold replaces the old one, fills its own place, then every worker in turn.
    def mold_ready(pid)
      molds = @refork.ready(pid) or return
      mold, old = molds
      old&.signal("TERM")
      @replacements = @workers.values.reject(&:retiring).sort_by(&:index)
      @phasing = :refork
      spawn(mold.index) unless @stopping
    end

    def adopt(index, pid)
      worker = @refork.adopt(index, pid)
      @workers[pid] = worker if worker
      @refork.lost.each { |lost| spawn(lost.index, replaces: lost.replaces) unless @stopping }
    end

    # A process the master waited for that is not in @workers: the mold or a worker becoming
    # one, whose places are filled again; or a child of a worker the subreaper adopted.
    def not_a_worker(pid)
      @refork&.exited(pid, stopping: @stopping)&.each { |worker| spawn(worker.index, replaces: worker.replaces) }
      true
    end
  end
end
