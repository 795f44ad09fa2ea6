# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # The associations one request loaded up front (`includes`, `preload`, Sequel's `eager`)
      # and whether any of them was then read: one never read is unused eager loading, reported
      # the way Bullet's "AVOID eager loading" is (`Post => [:comments]: remove
      # .includes(:comments)`). A read is any call of the association's reader once loaded, so
      # `post.comments.size` on loaded comments counts as a use (Bullet reports that one unused).
      #
      # Kept in the request's {RequestProfile#extras} while it runs and taken out before the
      # record is stored. A read of an association allocates nothing here (thousands a request
      # after an eager load), and once every eager load of the request has been read (usually
      # at the first record) a hook's {.unread} answers nil and it looks no further.
      class EagerLoads
        KEY = :eager_loads
        # At most this many distinct associations are noted per request.
        LIMIT = 256

        # One eager-loaded association: where it was loaded, for how many owners, and whether read.
        Entry = Struct.new(:call_site, :owners, :loader, :used)

        # Notes an eager load for the current profiled request (nothing outside one).
        # @param model [Class] the model that declares the association.
        # @param name [Symbol] the association.
        # @param owners [Integer] how many records it was loaded for.
        # @param loader [Symbol] the method the advice names: :includes, :eager, :eager_graph.
        # @return [void]
        def self.preloaded(model, name, owners, loader)
          profile = Profiler.accounting.current or return
          extras = (profile.extras ||= {})
          (extras[KEY] ||= new).add(model, name, owners, loader) { Profiler.recorder.site }
        end

        @pending = 0
        @lock = Thread::Mutex.new

        class << self
          # @return [Integer] how many requests of the process have an eager load not read yet
          #   (only decides whether a read looks any further; a profile abandoned with one
          #   leaves it high, which costs speed, never a finding).
          attr_reader :pending

          # Counts a request in or out of {.pending} (threads of a threaded server share it).
          # @param delta [Integer] 1 or -1.
          # @return [void]
          def count_pending(delta)
            @lock.synchronize { @pending += delta }
          end
        end

        # The current profiled request's eager loads while some are still unread: what a hook
        # asks before it works out which association it reads (most reads find nil here, most
        # of them at the first comparison, when no request of the process has an unread one).
        # @return [EagerLoads, nil]
        def self.unread
          return nil if @pending.zero?
          extras = Profiler.accounting.current&.extras or return nil
          loads = extras[KEY]
          loads if loads&.unread?
        end

        # Takes a profile's eager loads out of it (a stored record keeps only the findings).
        # @param profile [RequestProfile]
        # @return [EagerLoads, nil]
        def self.take(profile)
          extras = profile.extras or return nil
          loads = extras.delete(KEY)
          profile.extras = nil if extras.empty?
          loads&.settle
          loads
        end

        # @param profile [RequestProfile]
        # @return [EagerLoads, nil] the profile's eager loads, left in place.
        def self.of(profile)
          extras = profile.extras
          extras && extras[KEY]
        end

        def initialize
          @loads = {}
          @size = 0
          @unread = 0
        end

        # @param model [Class] see {.preloaded}.
        # @param name [Symbol] the association.
        # @param owners [Integer] how many records it was loaded for.
        # @param loader [Symbol] see {.preloaded}.
        # @yieldreturn [String, nil] the call site, asked for only on an association's first load.
        # @return [void]
        def add(model, name, owners, loader)
          names = (@loads[model] ||= {})
          return names[name].owners += owners if names[name]
          return if @size >= LIMIT
          @size += 1
          EagerLoads.count_pending(1) if @unread.zero?
          @unread += 1
          names[name] = Entry.new(yield, owners, loader, false)
        end

        # @return [Boolean] whether some eager load is not read yet.
        def unread?
          @unread.positive?
        end

        # Notes a read of a loaded association.
        # @param model [Class] see {.read}.
        # @param name [Symbol] the association.
        # @return [void]
        def read(model, name)
          entry = (names = @loads[model]) && names[name]
          return unless entry && !entry.used
          entry.used = true
          @unread -= 1
          EagerLoads.count_pending(-1) if @unread.zero?
        end

        # Leaves the process-wide count of requests with unread eager loads ({.pending}): the
        # request is over.
        # @return [void]
        def settle
          return if @unread.zero?
          @unread = 0
          EagerLoads.count_pending(-1)
        end

        # @return [Array<Hash>] a finding per association loaded up front and never read:
        #   {kind: :unused_eager_loading, call_site:, count: (owners), advice:}.
        def unused
          @loads.flat_map do |model, names|
            names.filter_map do |name, entry|
              next if entry.used
              { kind: :unused_eager_loading, call_site: entry.call_site, count: entry.owners,
                advice: "#{AssociationLoad.subject(model, name)}: remove .#{entry.loader}(#{name.inspect})" }
            end
          end
        end
      end
    end
  end
end
