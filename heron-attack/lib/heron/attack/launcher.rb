# frozen_string_literal: true

require_relative "generator"
require_relative "web_socket/generator"
require_relative "target_picker"
require_relative "progress_pipe"
require_relative "progress_relay"
require_relative "clock"

module Heron
  module Attack
    # Runs the attack in this process, or forks --processes generator processes that each send
    # every N-th request (rate R/N, interleaved due times, one shared monotonic start) and send
    # their {Recorder} back over a pipe to be merged. With a progress line, each process also
    # writes snapshots to a second pipe that a {ProgressRelay} sums.
    class Launcher
      # @param options [Options] the run's settings.
      # @param targets [TargetPicker, Array<Target>] each process gets its own copy
      #   ({TargetPicker#for_process}); an Array is used round robin.
      # @param output [IO, nil] per-request lines go here when --per-request.
      # @param progress [Progress, nil] the live line.
      def initialize(options, targets, output: nil, progress: nil)
        @options = options
        @targets = targets.is_a?(TargetPicker) ? targets : TargetPicker.new(targets)
        @output = options.output.per_request ? output : nil
        @progress = progress
      end

      # @return [Recorder] all processes' results, merged.
      # @raise [SocketError] when a target's host does not resolve.
      # @raise [RuntimeError] when a generator process fails.
      def run
        raise_open_file_limit
        return run_here if @options.processes.count == 1
        generator(0, 1).resolve! # fail before forking
        start = Clock.now + 0.2 + (0.05 * @options.processes.count)
        children = spawn_all(start)
        relay = @progress && ProgressRelay.new(@progress, children.map(&:last)).start
        recorders = children.map { |pid, reader, _| collect(pid, reader) }
        relay&.finish
        recorders.reduce { |all, one| all.merge!(one) }
      end

      # Asks the run to stop sending (in every process) and to report what it has. Safe to call
      # from a signal handler.
      # @return [void]
      def stop
        @stopping = true
        @generator&.stop
        @children&.each { |pid, *| Process.kill(:TERM, pid) }
      rescue Errno::ESRCH
        nil
      end

      private

      # The single-process run. A stop that came before the generator existed still counts.
      def run_here
        @generator = generator(0, 1, @progress)
        @generator.resolve!
        @generator.stop if @stopping
        @generator.run
      end

      # Forks the generator processes, each known to {#stop} from the moment it exists. While
      # forking, TERM runs {#stop}, so a child inherits that handler until it sets its own: a
      # stop passed on to a child that has just been forked cannot kill it before it reports.
      # A stop that came during the forking reaches every child once all exist.
      def spawn_all(start)
        @children = []
        previous = trap(:TERM) { stop }
        @options.processes.count.times { |k| @children << spawn(k, start) }
        stop if @stopping
        @children
      ensure
        trap(:TERM, previous || "DEFAULT")
      end

      # Each request in flight holds a connection, and many systems start processes with a soft
      # limit of 1,024 descriptors under a far higher hard one: the generator (and every process
      # it forks) raises its soft limit to the hard one, as Go programs do, before opening any.
      def raise_open_file_limit
        soft, hard = Process.getrlimit(:NOFILE)
        Process.setrlimit(:NOFILE, hard, hard) if soft < hard
      rescue SystemCallError, NotImplementedError
        nil # an unlimited hard limit can be refused; the soft one stays
      end

      def generator(offset, stride, progress = nil)
        return web_socket_generator(offset, stride, progress) if @options.websocket?
        load = @options.load
        client = @options.client_settings.merge(connections: share(load.connections, stride)) # this process's share
        Generator.new(@targets.for_process(offset, @options.request.seed), schedule: load.schedule, total: load.total_requests,
                                **client, stride: stride, offset: offset, output: @output, progress: progress)
      end

      def web_socket_generator(offset, stride, progress)
        web_socket = @options.web_socket
        plan = { connections: @options.load.connections, connect_rate: web_socket.connect_rate, rate: web_socket.message_rate,
                 messages: web_socket.messages }
        WebSocket::Generator.new(@targets.targets.first, message: @options.request.body || "heron attack", plan: plan,
                                                         timeout: @options.client.timeout, tls: @options.tls.context,
                                                         stride: stride, offset: offset, progress: progress)
      end

      def share(connections, stride)
        connections && (connections.to_f / stride).ceil
      end

      def spawn(offset, start)
        reader, writer = IO.pipe
        progress_reader, progress_writer = IO.pipe if @progress
        pid = fork { child(offset, start, writer, progress_writer && ProgressPipe.new(progress_writer)) }
        [writer, progress_writer].compact.each(&:close)
        [pid, reader, progress_reader]
      end

      def child(offset, start, writer, progress)
        result = child_result(offset, start, progress)
        writer.write(Marshal.dump(result))
        @output&.flush
        exit!(0)
      end

      def child_result(offset, start, progress)
        @children = nil # the parent's, copied by fork: a child stops only itself
        trap(:TERM) { stop }
        trap(:INT) { stop } # Ctrl-C reaches the whole process group
        @generator = generator(offset, @options.processes.count, progress)
        @generator.stop if @stopping
        @generator.run(start)
      rescue StandardError => e
        "#{e.class}: #{e.message}"
      end

      def collect(pid, reader)
        data = reader.read
        reader.close
        Process.wait(pid)
        result = data.empty? ? "generator process #{pid} exited without a result" : Marshal.load(data) # rubocop:disable Security/MarshalLoad
        raise result if result.is_a?(String)
        result
      end
    end
  end
end
