# frozen_string_literal: true

require_relative "cluster/worker"
require_relative "control"
require_relative "cluster/announcer"
require_relative "cluster/forker"
require_relative "cluster/refork"
require_relative "cluster/rollout"
require_relative "cluster/roster"
require_relative "cluster/signals"
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
  # Its collaborators: {Roster} (the live workers), {Forker} (makes and forks them), {Signals}
  # (the trapped signals' queue), {Rollout} (replacing them one at a time), {Announcer} (readiness,
  # systemd), {Refork} (the mold) and Launcher::HotRestart.
  class Cluster
    include Clock

    RESPAWN_DELAY = 1.0
    TICK = 0.5
    DUMP_GRACE = 2.0
    private_constant :RESPAWN_DELAY, :TICK, :DUMP_GRACE

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
      @log_file = log_file
      @announcer = Announcer.new(readiness, notifier)
      @binder = Binder.for(config)
      @roster = Roster.new(config.workers, metrics)
      @signals = Signals.new
      @rollout = Rollout.new
    end

    # @return [Integer, nil] the master's pid, once it runs.
    def pid = @announcer.pid

    # @return [Time, nil] when the master started.
    def booted_at = @announcer.booted_at

    # @return [Integer] workers started after the first round (crashes, timeouts, replacements).
    def restarts = @roster.restarts

    # @return [Integer] how many workers the master keeps (changed by TTIN/TTOU).
    def worker_count = @roster.wanted

    # @return [Array<Hash>] one status per live worker (see {Worker#status}).
    def workers = @roster.map(&:status)

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
    def stats = @roster.stats.merge(mold_pid: @refork&.mold&.pid)

    private

    def boot
      @announcer.booted
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
      @roster.report_to(@exporter.local)
    end

    def start(listeners, app)
      @forker = Forker.new(@config, @logger, listeners, app, exporter: @exporter, log_file: @log_file)
      # Trapped before the first fork: a stop that arrives while workers are being forked (a
      # hot restart cancelled during boot) is queued, not an exception in the middle of a fork.
      @signals.trap
      start_refork if @config.refork_after
      @roster.wanted.times { |index| spawn(index) }
    end

    def spawn(index, replaces: nil)
      worker = @forker.worker(index, replaces: replaces)
      return if @refork&.order(worker) # forked by the mold: adopted once it says its pid
      # Never while the control thread runs one of its fibers: the child would crash in GC.
      @control.quiesced { @forker.fork(worker, close: master_only_ios) }
      @roster.add(worker)
    end

    # The master's ends of its pipes (the {Forker} adds its own): a worker holding the alive
    # pipe's write end would never see it close when the master dies.
    def master_only_ios
      [*@signals.ios, @hot_restart&.reader, *@announcer.ios, *@roster.map(&:link), *@refork&.links].compact
    end

    def supervise
      until @stopping && @roster.empty? && @hot_restart.nil? && @refork&.pids.to_a.empty?
        wait_for_events
        while (signal = @signals.shift)
          handle(signal)
        end
        reap
        tick
      end
    end

    def wait_for_events
      channel = @forker.channel
      ready, = IO.select([@signals.reader, channel.reader, @hot_restart&.reader].compact, nil, nil, @stopping ? 0.1 : TICK)
      @signals.drain if ready&.include?(@signals.reader)
      channel.read.each { |pid, connections, parked, served| heartbeat(pid, connections, parked, served) }
      channel.notes.each { |kind, *numbers| mold_note(kind, *numbers) } if @refork
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
      @announcer.stopping
      @logger.info("#{graceful ? 'graceful' : 'immediate'} stop (SIG#{signal})")
      @hot_restart&.cancel
      @roster.each { |worker| worker.signal(graceful ? "TERM" : "QUIT") }
      @refork&.signal(graceful ? "TERM" : "QUIT")
    end

    def heartbeat(pid, connections, parked, served = 0)
      worker = @roster[pid] or return
      first = worker.beat(connections, parked, served)
      serving(worker) if first
      refork(worker, "it answered #{served} requests") if @refork&.due?(served)
    end

    # A worker's first heartbeat: it accepts connections now.
    def serving(worker)
      old = worker.replaces
      worker.replaces = nil
      retire(old, "replaced by pid #{worker.pid}") if old
      next_replacement if !old && @rollout.reforking? # a refork's first worker (no one to retire)
      @announcer.ready(status) if !@announcer.ready? && @roster.all_serving?
    end

    def status = @roster.status

    def retire(worker, reason)
      return unless @roster.live?(worker)
      @logger.info("worker #{worker.index} (pid #{worker.pid}) #{reason}; draining it")
      worker.retiring = true
      worker.kill_at = now + @config.shutdown_timeout + @config.drain_delay + 5
      worker.signal("TERM")
    end

    def reap
      while (pid, status = Process.wait2(-1, Process::WNOHANG))
        worker = @roster.delete(pid) or (not_a_worker(pid) && next)
        @exporter&.worker_exited(pid)
        @announcer.worker_exited
        exited(worker, status)
      end
    rescue Errno::ECHILD
      nil
    end

    def exited(worker, status)
      return next_replacement if worker.retiring
      return if @stopping || worker.index >= @roster.wanted
      @logger.warn("worker #{worker.index} (pid #{worker.pid}) exited (#{status.inspect}); restarting")
      @roster.restarted(crashed: true)
      sleep(RESPAWN_DELAY) if now - worker.started_at < RESPAWN_DELAY
      spawn(worker.index, replaces: worker.replaces)
    end

    # Every tick: stop deadlines, hung or slow-booting workers, memory, the watchdog.
    def tick
      force_stop if @stopping && now > @deadline
      @roster.each { |worker| check(worker) } unless @stopping
      check_memory unless @stopping
      @announcer.tick(status)
    end

    def force_stop
      @hot_restart&.finish(0)
      @roster.each { |worker| worker.signal("KILL") }
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
      return if busy_replacing?
      worker, rss = @roster.over_memory(limit)
      replace(worker, "uses #{rss} bytes, above worker_max_memory #{limit}") if worker
    end

    # Starts a new worker for `worker`'s index; the old one drains once the new one serves.
    def replace(worker, reason)
      @logger.info("worker #{worker.index} (pid #{worker.pid}) #{reason}; starting its replacement")
      @roster.restarted(crashed: false)
      spawn(worker.index, replaces: worker)
    end

    def busy_replacing?
      @roster.replacing? || (@refork && !@refork.idle?)
    end

    def phased_restart
      return @logger.warn("SIGUSR1 ignored: phased restart needs preload off (use SIGUSR2)") if @config.preload
      return @logger.warn("SIGUSR1 ignored: a phased restart is under way") unless @rollout.idle?
      @announcer.reloading
      @logger.info("phased restart of #{@roster.size} workers")
      @rollout.start(@roster, phased: true)
      next_replacement
    end

    def next_replacement
      return if busy_replacing?
      worker = @rollout.shift
      return phased_restart_done unless worker
      @roster.live?(worker) ? replace(worker, @rollout.reason) : next_replacement
    end

    # The last replacement of a phased restart or a refork is serving and the one it replaced
    # has exited: said in the log (a refork asked for before this line is ignored).
    def phased_restart_done
      case @rollout.finish
      when :refork then @logger.info("refork done: every worker is forked from mold generation #{@refork.generation}")
      when :phased
        @logger.info("phased restart done")
        @announcer.reloaded(status)
      end
    end

    def resize(delta)
      count = @roster.resize(delta) or return @logger.warn("SIGTTOU ignored: at least one worker stays")
      @logger.info("workers: #{count} (SIG#{delta.positive? ? 'TTIN' : 'TTOU'})")
      return spawn(count - 1) if delta.positive?
      @roster.select { |worker| worker.index >= count }.each { |worker| retire(worker, "removed") }
    end

    def reopen_logs
      @log_file&.reopen
      @logger.info(@log_file ? "SIGHUP: log file reopened" : "SIGHUP: no log_file to reopen")
      @roster.each(&:hangup)
    end

    def hot_restart
      return if Launcher::HotRestart.ignored?(@logger, under_way: !@hot_restart.nil?, stopping: @stopping)
      @hot_restart = Launcher::HotRestart.new(@binder, @control, @announcer.notifier, @logger, role: "master").start
    end

    def hot_restart_answer
      answer = @hot_restart.poll or return
      restart = @hot_restart
      @hot_restart = nil
      restart.finish(5) if restart.conclude(answer, status) { handed_over } == :cancelled
    end

    # The new master is the service now: this one drains.
    def handed_over
      @announcer.handed_over
      stop("TERM")
    end

    # Reforking (`refork_after`): the master becomes a child subreaper before the first fork.
    def start_refork
      @refork = Refork.new(@config.refork_after, @logger)
      @signals.trap(%w[URG]) if @refork.enabled?
    end

    def refork_on_demand
      return @logger.warn("SIGURG ignored: reforking is off (set refork_after)") unless @refork&.enabled?
      worker = @roster.busiest
      return @logger.warn("refork ignored: no serving worker to promote") unless worker
      refork(worker, "asked for")
    end

    # Takes `worker` out of the pool to become the mold (it drains; its place is filled once the
    # mold is ready).
    def refork(worker, reason)
      return @logger.warn("refork ignored: the cluster is stopping or replacing workers") if @stopping || busy_replacing?
      @logger.info("refork (#{reason}): worker #{worker.index} (pid #{worker.pid}) becomes the mold")
      @roster.delete(worker.pid) if @refork.promote(worker)
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
      @rollout.start(@roster)
      spawn(mold.index) unless @stopping
    end

    def adopt(index, pid)
      worker = @refork.adopt(index, pid)
      @roster.add(worker) if worker
      @refork.lost.each { |lost| spawn(lost.index, replaces: lost.replaces) unless @stopping }
    end

    # A process the master waited for that is not in the {Roster}: the mold or a worker becoming
    # one, whose places are filled again; or a child of a worker the subreaper adopted.
    def not_a_worker(pid)
      @refork&.exited(pid, stopping: @stopping)&.each { |worker| spawn(worker.index, replaces: worker.replaces) }
      true
    end
  end
end
