# frozen_string_literal: true

require "socket"
require_relative "cpu_set"

module Heron
  module Attack
    # Whether the generator competes with the target for a core. A target counts only when it
    # is on this machine (its address is loopback or one of this machine's). Its processes are
    # the ones holding the listening socket of its port (from /proc/net/tcp{,6} and each
    # process's descriptors; the generator itself excluded), less any whose child holds it too:
    # a master that forked workers does not serve. The rule: the generator's and the target's
    # allowed CPUs overlap, and together they have fewer CPUs than generator processes plus
    # target processes, so at least two of them must take turns on a core. A local target
    # whose process cannot be seen (another user's, another namespace's) is reported as such.
    class CoreSharing
      LISTEN = "0A"

      # @param targets [Array<Target>] @param processes [Integer] generator processes.
      def initialize(targets, processes)
        @endpoints = targets.map { |t| [t.uri.host, t.uri.port] }.uniq
        @processes = processes
        @mine = CpuSet.mine
      end

      # @return [Array<Hash>] one entry per local target: host, port, target_pids, target_cpus,
      #   generator_cpus, generator_processes, shares_core (nil when its process was not seen).
      def placements
        @placements ||= @endpoints.filter_map { |host, port| placement(host, port) if local?(host, port) }
      end

      # @return [Array<String>] one warning per local target that shares (or may share) a core.
      def warnings
        placements.filter_map { |p| warning(p) unless p["shares_core"] == false }
      end

      private

      def placement(host, port)
        pids = serving(listeners(port))
        sets = pids.filter_map { |pid| CpuSet.of(pid) }
        cpus = sets.reduce(:|)
        { "host" => host, "port" => port, "target_pids" => pids, "target_cpus" => cpus&.to_s, "generator_cpus" => @mine.to_s,
          "generator_processes" => @processes, "shares_core" => cpus && shares?(cpus, pids.size) }
      end

      def shares?(cpus, count)
        (@mine & cpus).size.positive? && (@mine | cpus).size < @processes + count
      end

      def warning(placement)
        where = "#{placement['host']}:#{placement['port']}"
        unless placement["target_pids"].any?
          return "the target #{where} is on this machine, but its process could not be seen: it may share a core with the generator"
        end
        "the generator (#{@processes} process#{'es' if @processes > 1}, CPUs #{placement['generator_cpus']}) shares a core with " \
          "the target #{where} (pid #{placement['target_pids'].join(', ')}, CPUs #{placement['target_cpus']}): each one's CPU time " \
          "delays the other, so latency includes the generator's own work; pin them apart (taskset) or run the generator elsewhere"
      end

      def local?(host, port)
        addresses = Addrinfo.getaddrinfo(host, port, nil, :STREAM).map(&:ip_address)
        own = Socket.ip_address_list.map(&:ip_address)
        addresses.any? { |a| Addrinfo.ip(a).ipv4_loopback? || Addrinfo.ip(a).ipv6_loopback? || own.include?(a) }
      rescue SocketError
        false
      end

      # Inodes of the sockets listening on the port.
      def listeners(port)
        hex = format(":%04X", port)
        %w[/proc/net/tcp /proc/net/tcp6].flat_map do |path|
          File.readlines(path).filter_map do |line|
            fields = line.split
            fields[9] if fields[1]&.end_with?(hex) && fields[3] == LISTEN
          end
        rescue SystemCallError
          []
        end.uniq
      end

      # The processes holding one of the sockets, less the generator and any process whose child
      # holds one too.
      def serving(inodes)
        return [] if inodes.empty?
        wanted = inodes.map { |inode| "socket:[#{inode}]" }
        holders = Dir.glob("/proc/[0-9]*").filter_map do |dir|
          pid = File.basename(dir).to_i
          pid if pid != Process.pid && holds?(dir, wanted)
        end
        parents = holders.filter_map { |pid| parent(pid) }
        holders - parents
      end

      def holds?(dir, wanted)
        Dir.children("#{dir}/fd").any? { |fd| wanted.include?(File.readlink("#{dir}/fd/#{fd}")) }
      rescue SystemCallError
        false
      end

      def parent(pid)
        File.read("/proc/#{pid}/stat")[/\) \S (\d+)/, 1]&.to_i
      rescue SystemCallError
        nil
      end
    end
  end
end
