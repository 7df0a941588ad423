import { EventEmitter } from 'node:events';
import { ACCEPT_MESSAGE, followPrimary, makeRoomMessage, type RoomMaker } from './cluster-messages';

describe(followPrimary.name, () => {
  it("passes the primary's make-room and accept messages to the process, and nothing else", () => {
    const child = Object.assign(new EventEmitter(), { send: jest.fn(), connected: false });
    const room: RoomMaker = { makeRoom: jest.fn(), acceptAgain: jest.fn(), takeAnswered: () => 0 };
    followPrimary(child as unknown as NodeJS.Process, room, () => 0);

    child.emit('message', makeRoomMessage(2_000, 0.5, 'requests'));
    child.emit('message', ACCEPT_MESSAGE);
    child.emit('message', { type: 'metrics:collect' });

    expect(room.makeRoom).toHaveBeenCalledWith(2_000, 0.5, 'requests');
    expect(room.acceptAgain).toHaveBeenCalledTimes(1);
  });
});
