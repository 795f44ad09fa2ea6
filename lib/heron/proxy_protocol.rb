# frozen_string_literal: true

require "socket"
require "ipaddr"
require_relative "clock"

module Heron
  # The PROXY protocol (HAProxy's, versions 1 and 2), on listeners bound with
  # `tcp://HOST:PORT?proxy_protocol=v1` or `...=v2`: the load balancer opens each connection with
  # a header naming the client, and Heron uses that address as the connection's peer.
  #
  # The header is read in the connection's own fiber before its first request, within
  # `header_timeout`, and never past its last byte (so the request behind it is left for the HTTP
  # parser). A connection without a valid header is closed, as the specification requires.
  # https://www.haproxy.org/download/2.8/doc/proxy-protocol.txt
  module ProxyProtocol
    # Raised for a missing, malformed or late header; the connection is dropped.
    class Error < StandardError; end

    V1_MAX = 107
    PORT = /\A(?:0|[1-9][0-9]{0,4})\z/
    V2_SIGNATURE = "\r\n\r\n\x00\r\nQUIT\n".b.freeze
    V2_MAX_PAYLOAD = 4096 # the addresses take at most 216 bytes; the rest would be TLVs
    VERSIONS = { "v1" => :v1, "v2" => :v2 }.freeze
    LISTENERS = ObjectSpace::WeakMap.new
    private_constant :LISTENERS, :PORT

    module_function

    # @param uri [String] a bind URI.
    # @return [Symbol, nil] :v1 or :v2 when the URI asks for the PROXY protocol.
    def version_in(uri)
      VERSIONS[uri[/[?&]proxy_protocol=(v[12])\b/, 1]]
    end

    # Records that connections accepted from `listener` start with a PROXY header.
    # @param listener [BasicSocket]
    # @param version [Symbol, nil] :v1, :v2 or nil.
    # @return [BasicSocket] listener
    def mark(listener, version)
      LISTENERS[listener] = version if version
      listener
    end

    # @param listener [BasicSocket]
    # @return [Symbol, nil] the PROXY protocol version its connections speak, if any.
    def version_for(listener)
      LISTENERS[listener]
    end

    # Reads the header from a freshly accepted socket.
    # @param io [BasicSocket]
    # @param version [Symbol] :v1 or :v2.
    # @param timeout [Numeric] seconds for the whole header.
    # @return [String, nil] the client's address, or nil when the proxy speaks for itself
    #   (v1 UNKNOWN, v2 LOCAL such as a health check, or a non-IP family).
    # @raise [Error]
    def read(io, version, timeout)
      deadline = Clock.now + timeout
      version == :v2 ? read_v2(io, deadline) : read_v1(io, deadline)
    end

    # @param line [String] a v1 header without its CRLF.
    # @return [String, nil] the source address (nil for UNKNOWN).
    # @raise [Error]
    def parse_v1(line)
      words = line.split(" ", -1)
      raise Error, "not a PROXY v1 header" unless words[0] == "PROXY"
      return nil if words[1] == "UNKNOWN"
      raise Error, "bad PROXY v1 header" unless words.size == 6 && %w[TCP4 TCP6].include?(words[1])
      words[4, 2].each { |text| port(text) }
      address(words[2], words[1] == "TCP4" ? Socket::AF_INET : Socket::AF_INET6)
    end

    # @param head [String] the 16 fixed bytes of a v2 header.
    # @param payload [String] the bytes the header's length announces.
    # @return [String, nil] the source address (nil for LOCAL or a non-IP family).
    # @raise [Error]
    def parse_v2(head, payload)
      version_command = head.getbyte(12)
      raise Error, "bad PROXY v2 version" unless version_command >> 4 == 2
      return nil if version_command & 0x0f == 0 # LOCAL
      raise Error, "bad PROXY v2 command" unless version_command & 0x0f == 1
      source_v2(head.getbyte(13) >> 4, payload)
    end

    def source_v2(family, payload)
      size = { 1 => 4, 2 => 16 }[family] or return nil # AF_UNIX and AF_UNSPEC: no IP to report
      raise Error, "PROXY v2 address block too short" if payload.bytesize < size * 2 + 4
      IPAddr.new_ntoh(payload.byteslice(0, size)).to_s
    end

    # A v1 port: decimal, 0 to 65535, no leading zeros (the specification's form).
    def port(text)
      raise Error, "bad PROXY v1 port #{text.inspect}" unless PORT.match?(text) && text.to_i <= 65_535
    end

    def address(text, family)
      ip = IPAddr.new(text)
      raise Error, "PROXY v1 address #{text.inspect} does not match its family" unless ip.family == family
      ip.to_s
    rescue IPAddr::Error
      raise Error, "bad PROXY v1 address #{text.inspect}"
    end

    # Peeks, then consumes exactly up to the CRLF: bytes before it all belong to the header, so
    # they are taken as they come, and the request behind the header is never read.
    def read_v1(io, deadline)
      line = +""
      loop do
        peeked = peek(io, V1_MAX - line.bytesize, deadline)
        if (ending = peeked.index("\r\n"))
          line << take(io, ending + 2)
          return parse_v1(line.chomp("\r\n"))
        end
        line << take(io, peeked.bytesize)
        raise Error, "PROXY v1 header longer than #{V1_MAX} bytes" if line.bytesize >= V1_MAX
        raise Error, "not a PROXY v1 header" unless "PROXY ".start_with?(line[0, 6]) || line.start_with?("PROXY ")
      end
    end

    def read_v2(io, deadline)
      head = exactly(io, 16, deadline)
      raise Error, "not a PROXY v2 header" unless head.byteslice(0, 12) == V2_SIGNATURE
      length = head.byteslice(14, 2).unpack1("n")
      raise Error, "PROXY v2 header of #{length} bytes is too long" if length > V2_MAX_PAYLOAD
      parse_v2(head, exactly(io, length, deadline))
    end

    def exactly(io, count, deadline)
      data = +"".b
      data << take(io, [count - data.bytesize, peek(io, count - data.bytesize, deadline).bytesize].min) while data.bytesize < count
      data
    end

    def peek(io, max, deadline)
      loop do
        data = io.recv_nonblock(max, Socket::MSG_PEEK, exception: false)
        raise Error, "connection closed before the PROXY header ended" if data.nil? || data == ""
        return data.b unless data == :wait_readable
        left = deadline - Clock.now
        raise Error, "PROXY header timed out" unless left.positive? && io.wait_readable(left)
      end
    end

    def take(io, count)
      return "".b if count.zero?
      io.read_nonblock(count).b
    end

    private_class_method :source_v2, :port, :address, :read_v1, :read_v2, :exactly, :peek, :take
  end
end
