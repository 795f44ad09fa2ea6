# frozen_string_literal: true

require_relative "../../clock"
require_relative "../../timeout_error"

module Heron
  class Server
    class Parking
      # One connection's place in {Parking}: it waits here for its client, in its fiber or
      # parked, and Parking wakes it here. The connection says what it waits for; which lane,
      # which deadline and whether the fiber is given up is decided here and in Parking.
      class Spot
        include Clock

        # How long, and for how many bytes, a connection whose request body timed out while
        # parked keeps dropping what its client still sends after the 408 (as
        # Connection::BufferedSocket#linger_close).
        LINGER_SECONDS = 1.0
        LINGER_BYTES = 256 * 1024
        # The lanes of upgraded connections (see #park_until).
        UPGRADED = %i[upgraded closing].freeze
        private_constant :UPGRADED

        # @return [#resume_first, #resume_requests, #time_out_body] the connection.
        attr_reader :connection

        # @param parking [Parking]
        # @param connection [Object] called back when it wakes: `resume_first` (bytes came on a new
        #   connection), `resume_requests(request)` (its next request, or more of `request`'s body,
        #   came) and `time_out_body(request)` (the body did not come in time); each returns
        #   :parked when it parked again. One parked with {#park_until} answers `readable`,
        #   `expired` and `abandoned` instead.
        # @param socket [Connection::BufferedSocket]
        # @param accepted_at [Float]
        # @param parkable [Boolean] whether it may park at all (see Parking#spot).
        def initialize(parking, connection, socket, accepted_at, parkable:)
          # Those #wait_for_next reads for every request first: Ruby 3.1 keeps them in the order
          # first set, so they share a cache line (bench/results/per_core.md, "Fewer cold lines a request").
          @socket = socket
          @parking = parking
          @parkable = parkable
          @quick = false # whether its last request came quickly (see #wait_for_next)
          @connection = connection
          @accepted_at = accepted_at
          @lane = nil # where it is parked; nil while it has a fiber
          @request = nil # the request whose body it waits for, parked
          @since = nil # when its idle wait or its parked body wait began; the linger's end
          @evicted = false # see #evict
        end

        # @return [BasicSocket] the socket.
        def io = @socket.io

        # A new connection that has sent nothing yet parks until it does, so a burst of new
        # connections holds no fibers while their requests travel.
        # @return [Symbol, nil] :parked, or nil: bytes are there (or it cannot park).
        def wait_for_first
          return nil unless @parkable && !@socket.buffered? && :wait_readable.equal?(@socket.fill_now)
          park(:fresh, @accepted_at + @parking.first_byte_wait)
        end

        # @return [Float] seconds a new connection has to send its first bytes (Parking#first_byte_wait).
        def first_byte_wait = @parking.first_byte_wait

        # A kept-alive connection between requests. The fiber first gives up its turn: a client
        # that always has its next request ready would otherwise keep the loop here and starve
        # every other connection. If nothing has come, it waits in its fiber
        # (keepalive_park_after when parking, else keepalive_timeout), so a client that sends its
        # next request at once pays nothing, then parks until keepalive_timeout. At most
        # Parking::HOT_WAITS connections wait in their fiber at once; the others park at once, so
        # a burst of connections does not leave a fiber (and its stack pages) each; except a quick
        # one (its last request came while it waited in its fiber, or within
        # keepalive_park_after of parking), whose client is busy, not idle.
        # @return [Integer, Boolean, Symbol, nil] true or a byte count: bytes are there; false or
        #   nil: none came in time, the client closed or a drain began; :parked.
        def wait_for_next
          Fiber.scheduler.yield # Async::Task#yield's body, without finding the task (two calls less a request)
          return true if @socket.buffered?
          return false if @parking.draining?
          after = @parkable && @parking.park_after or return @parking.kept_wait(@socket)
          ready = @socket.fill_now
          return ready unless :wait_readable.equal?(ready)
          ready = @parking.hot_wait(@socket, @quick)
          @quick = ready.is_a?(Integer) # else it parks (the wake-up tells) or closes
          return ready unless ready == false || :busy.equal?(ready)
          return nil if @parking.draining?
          @since = now
          park(:idle, @since + @parking.config.keepalive_timeout - after)
        end

        # Before the app is called: the app is not called until `prebuffer_body` bytes of the
        # body (or all of it) are buffered, so a client that sends its body slowly waits parked,
        # not in an app's fiber blocked in rack.input.read. Chunked bodies and
        # `Expect: 100-continue` stream as before (the client waits for the app).
        # @param request [Request]
        # @param length [Integer, nil] the body's Content-Length.
        # @param expectation [Request::Expectation]
        # @param pace [Connection::BodyPace, nil] min_body_rate, told of the time parked.
        # When the pace allows no more waiting (min_body_rate: the bytes that woke it came too
        # late), it parks past its deadline: the parking lot answers it 408 (through the
        # connection's `time_out_body`) at the pace it cuts slow clients (ParkingLot's PACED
        # lanes), so body drippers that connected together are not cut, and do not reconnect,
        # together.
        # @return [Symbol, nil] :parked, :gone (the client closed first) or nil (call the app).
        def wait_for_body(request, length, expectation, pace)
          return nil unless @parkable && (want = body_wanted(length, expectation))
          count = prebuffer(want, pace)
          return :gone if count.nil?
          return nil unless count.is_a?(Symbol)
          @since = now
          park(:body, @since + (pace ? pace.next_wait : @parking.config.body_timeout), request)
        rescue Heron::TimeoutError
          @since = now
          park(:body, @since, request)
        end

        # After a 408 for a body that stopped coming: the connection lingers parked, with no
        # fiber, dropping what its client still sends, until the client closes or
        # LINGER_SECONDS pass. When thousands of slow clients are cut together, lingering in a
        # fiber each held thousands of fibers and timers.
        # An evicted connection (see #evict) closes instead: the 408 was its last write.
        # @return [Symbol, nil] :parked, or nil when the socket is closed.
        def linger
          return evicted if @evicted
          return nil unless @socket.shut_write
          @since = now + LINGER_SECONDS
          @linger_left = LINGER_BYTES
          drop
        end

        # For a connection that no longer speaks HTTP/1 (one upgraded by its app, between two
        # messages): parks it until its socket is readable, then calls its `readable` in a
        # connection worker, or until `deadline`, then its `expired` (each returns :parked when it
        # parked again; otherwise the reactor counts the connection closed); closed from outside
        # while parked (an eviction, the reactor ending), its `abandoned`. A graceful stop does
        # not close it (its owner decides).
        # @param deadline [Float] monotonic time.
        # @param closing [Boolean] whether it waits for its client's close (a deadline of its own;
        #   else every upgraded connection waits the same interval, so parking order is
        #   deadline order).
        # @return [Symbol, nil] :parked, or nil when it cannot park (a TLS socket, no epoll, or
        #   parking is off): then it waits in its fiber.
        def park_until(deadline, closing: false)
          @parkable ? park(closing ? :closing : :upgraded, deadline) : nil
        end

        # An upgraded connection parked between messages whose close began meanwhile (from
        # another connection or thread): it waits for its client's close until `deadline`, not
        # its ping deadline.
        # @param deadline [Float] monotonic time.
        # @return [Boolean] whether it was parked (else a worker is about to run it, and it
        #   parks with {#park_until} next).
        def wait_for_close(deadline)
          return false unless :upgraded.equal?(@lane) && @parking.repark(self, deadline, :closing)
          @lane = :closing
          true
        end

        # Closes the connection to make room at max_connections: now if it is parked. One the
        # lot has just handed to a worker (its bytes came or its deadline passed, and the job is
        # queued), or whose expiry is running (a 408 being written), is no longer in the lot and
        # has no fiber to stop: it closes when that job starts (#resume, #expire) or when it
        # would park again (#linger). Before, nothing closed it, and the accept loop waited for
        # some other connection to close, with the process idle, for up to the next dripper's cut
        # (the 3-7 s outliers in bench/results/connection_cap.md).
        # @return [Boolean] whether it was parked (and is now closed).
        def evict
          @evicted = true
          !@lane.nil? && @parking.release(self)
        end

        # Closes the connection now if it is parked between requests, or, when `fresh`, parked
        # before its first (a graceful stop).
        # @param fresh [Boolean]
        # @return [Boolean] whether it was.
        def close_if_idle(fresh)
          (:idle.equal?(@lane) || (fresh && :fresh.equal?(@lane))) && @parking.release(self)
        end

        # Parking: its socket became readable; runs in a worker's fiber. An evicted one closes.
        # @return [Symbol, nil] :parked when it parked again.
        def resume
          return evicted if @evicted
          lane = @lane
          request = @request
          @lane = @request = nil
          if :idle.equal?(lane)
            @quick = now - @since < @parking.park_after
            @since = nil # (#prebuffer reads it as the start of a parked body wait)
          end
          case lane
          when :linger then drop
          when :upgraded, :closing then @connection.readable
          when :fresh then @connection.resume_first
          else @connection.resume_requests(request)
          end
        end

        # Parking: its deadline passed. An idle or silent connection closes, as does a linger
        # whose time is up; one whose body stopped arriving gets 408 and lingers. An evicted one
        # closes.
        # @return [Symbol, nil] :parked when it lingers.
        def expire
          return evicted if @evicted
          request = @request
          upgraded = UPGRADED.include?(@lane)
          @lane = @request = nil
          return @connection.expired if upgraded
          return @connection.time_out_body(request) if request
          @socket.close
          nil
        end

        # Parking: it was taken out of the lot; closes the socket (an upgraded connection's
        # session does, and runs its on_close).
        # @return [void]
        def close
          upgraded = UPGRADED.include?(@lane)
          @lane = @request = nil
          upgraded ? @connection.abandoned : @socket.close
        end

        private

        # An evicted connection out of the lot closes instead of going on (see #evict).
        def evicted
          close
          nil
        end

        def park(lane, deadline, request = nil)
          @lane = lane
          @request = request
          @parking.park(self, @socket.io, deadline, lane)
          :parked
        end

        def body_wanted(length, expectation)
          return nil unless length&.positive? && !expectation.pending?
          want = length < @parking.config.prebuffer_body ? length : @parking.config.prebuffer_body
          want if @socket.buffered_bytes < want
        end

        # Reads what has come of the body, up to `want` buffered bytes; tells the pace how long
        # it was parked for them. Returns fill_now's last answer (a Symbol: wait for more).
        def prebuffer(want, pace)
          received = 0
          while @socket.buffered_bytes < want
            count = @socket.fill_now
            break unless count.is_a?(Integer)
            received += count
          end
          pace&.waited(@since ? now - @since : 0, received)
          @since = nil
          count
        end

        # Drops what the client sent since; parks again while time and bytes are left, else closes.
        def drop
          dropped = @socket.drain_now(@linger_left)
          return park(:linger, @since) if dropped && (@linger_left -= dropped).positive? && now < @since
          @socket.close
          nil
        end
      end
    end
  end
end
