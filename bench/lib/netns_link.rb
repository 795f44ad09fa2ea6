# frozen_string_literal: true

module Bench
  # Two hosts on one machine, as far as TCP is concerned: the clients run in a network namespace
  # of their own, joined to the server's (the root namespace) by a veth pair, and each side's
  # receive processing is steered (RPS) to its own CPU, the server on CPU 0 and the clients on
  # CPU 1. Over loopback the kernel delivers each packet to the receiving socket inside the
  # sender's system call, so the server's CPU time includes the clients' receive work; here that
  # work runs on the clients' CPU, as it would on the clients' machine. Needs root (`ip netns`).
  class NetnsLink
    SUBNET = "10.213.%d"
    private_constant :SUBNET

    # @return [String] the address the server binds, on the server's end of the pair.
    attr_reader :server_host
    # @return [Integer] the CPU the server runs on and its side's packets are processed on.
    attr_reader :server_cpu
    # @return [Integer] the clients' CPU, likewise.
    attr_reader :client_cpu

    # @param server_cpu [Integer] where the server runs and its side's packets are processed.
    # @param client_cpu [Integer] where the clients run and their side's packets are processed.
    def initialize(server_cpu: 0, client_cpu: 1)
      @name = "heron-bench-#{Process.pid}"
      @server_cpu = server_cpu
      @client_cpu = client_cpu
      net = format(SUBNET, Process.pid % 250)
      @server_host = "#{net}.1"
      @client_host = "#{net}.2"
    end

    # Creates the namespace and the veth pair; {#close} removes both.
    # @return [self]
    def open
      ip "netns", "add", @name
      ip "link", "add", host_end, "type", "veth", "peer", "name", "eth0", "netns", @name
      ip "addr", "add", "#{@server_host}/30", "dev", host_end
      ip "link", "set", host_end, "up"
      inside("ip", "addr", "add", "#{@client_host}/30", "dev", "eth0")
      inside("ip", "link", "set", "eth0", "up")
      inside("ip", "link", "set", "lo", "up")
      steer
      self
    end

    # Deletes the namespace (and with it both ends of the pair); safe to call twice.
    def close
      system("ip", "netns", "del", @name, err: File::NULL)
    end

    # @return [Array<String>] the prefix that runs a server command pinned to the server's CPU.
    def server_prefix = %W[taskset -c #{@server_cpu}]

    # @return [Array<String>] the prefix that runs a client command in the clients' namespace,
    #   pinned to their CPU (nsenter rather than `ip netns exec`, which remounts /sys each time:
    #   the prefix's own CPU time counts as the client's).
    def client_prefix = %W[nsenter --net=/run/netns/#{@name} taskset -c #{@client_cpu}]

    private

    def host_end = "hb#{Process.pid}"

    # Receive Packet Steering: packets arriving on each end are processed on that side's CPU.
    def steer
      File.write("/sys/class/net/#{host_end}/queues/rx-0/rps_cpus", mask(@server_cpu))
      inside("sh", "-c", "echo #{mask(@client_cpu)} > /sys/class/net/eth0/queues/rx-0/rps_cpus")
    end

    def mask(cpu) = format("%x", 1 << cpu)

    def inside(*command) = ip("netns", "exec", @name, *command)

    def ip(*args)
      system("ip", *args, exception: true)
    end
  end
end
