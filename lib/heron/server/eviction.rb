# frozen_string_literal: true

module Heron
  class Server
    # Chooses the connections a reactor thread closes when it is at `max_connections` and another
    # client is waiting to be accepted, so that client is served at once instead of after a
    # timeout: first an idle keep-alive connection (the longest open), else the connections whose
    # clients are slowest to send what the server waits for (a first request, a head, a body the
    # app has not been given yet), in bytes per second since the wait began. A client dripping a
    # head or a body a byte at a time has the lowest rate; a connection whose app is running, whose
    # response is being written, or that speaks HTTP/2 is never chosen.
    class Eviction
      # Bytes each waiting connection is credited, so one just accepted (its request may be on
      # the way) counts as fast: after 10 ms it is at 100 KiB/s, a dripper at 1 byte a second
      # after 10 s at about 100 bytes/s.
      CREDIT = 1024
      # Connections closed per look, at most. A look goes over every connection (4,096 by
      # default), and an attack whose drippers reconnect as fast as they are closed needs a
      # closing per reconnect; closing one per PER_BATCH open connections per look (1 below 128,
      # 16 from 1,024 up) keeps the looks few. They are the slowest, so closing a few more than
      # the clients waiting frees slots no fast client was using. Idle keep-alive connections
      # are closed one per look, as before: they are found without going over all.
      BATCH = 16
      PER_BATCH = 64
      # Connections closed per look, at most, when the listener says how many clients wait to be
      # accepted (see #choose).
      QUEUED_BATCH = 256

      # @param connections [Enumerable<Connection>] the thread's open connections, longest open first.
      # @param now [Float] the monotonic clock.
      # @param queued [Integer, nil] clients waiting in the listener's accept queue, when known
      #   (Control::Backlog). The queue is first in, first out: a new client behind hundreds
      #   of reconnecting slow clients is accepted only after all of them, and a look (a pass
      #   over every connection: 6-60 ms at 4,096 on a loaded machine) that made room for 16
      #   made it wait 16 looks per 256 ahead of it. So a look makes room for all of them
      #   (QUEUED_BATCH at most).
      # @return [Array<Connection>] to close: the longest-open idle keep-alive one, else the
      #   slowest clients (see BATCH, PER_BATCH, QUEUED_BATCH); empty when none may be closed.
      def choose(connections, now, queued = nil)
        idle = connections.find(&:kept_alive_idle?)
        return [idle] if idle
        count = (connections.size / PER_BATCH).clamp(1, BATCH)
        slowest(connections, now, queued ? queued.clamp(count, QUEUED_BATCH) : count)
      end

      private

      # The `count` connections with the lowest rate (bytes received per second since their wait
      # on the client began, CREDIT included), kept sorted as they are found, so a look allocates
      # nothing for the connections that are not among them.
      def slowest(connections, now, count)
        picked = []
        connections.each do |connection|
          since = connection.client_since or next
          rate = (connection.client_bytes + CREDIT) / [now - since, Float::EPSILON].max
          next if picked.size == count && rate >= picked.last[0]
          picked.pop if picked.size == count
          picked.insert(picked.bsearch_index { |(other, _)| other > rate } || picked.size, [rate, connection])
        end
        picked.map(&:last)
      end
    end
  end
end
