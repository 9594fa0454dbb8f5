/**
 * The text the app's quality reports score when the user does not pick their own chats: plain,
 * everyday English prose (a short story in common words), a few hundred tokens for the
 * usual vocabularies. Written for Gufo, so it is free to ship; changing it changes what new
 * reports measure, so reports name it with its version.
 */
export const BUILTIN_TEXT_LABEL = 'built-in text v1';

export const BUILTIN_TEXT = [
  'The lighthouse keeper woke before the sun, as she had every day for thirty years. She climbed the narrow stairs, counted the steps out of habit, and wiped the salt from the great glass lens. Far below, the boats were already leaving the harbour, their small lamps moving over the water like slow stars.',
  'Her grandson came to stay with her that summer. He was nine, and he asked questions all day long. Why is the sea green near the rocks and blue far away? How does the light know when to turn? What happens to the fish when a storm comes? She did not know every answer, so they looked things up together in the old books on the shelf, and when the books were silent they went outside to watch.',
  'One evening the wind changed. Clouds rolled in from the west, dark and heavy, and the first drops of rain struck the windows. The radio crackled with a call from a fishing boat that had lost its way in the fog. The keeper checked the lamp, started the horn, and sent her grandson to fetch the spare batteries from the shed. Together they kept the beam turning through the long night.',
  'In the morning the storm had passed. The boat was tied safely at the pier, and its captain walked up the hill with a basket of bread and fresh fish to say thank you. The boy decided, right then, that he would learn how everything in the lighthouse worked, from the clockwork in the tower to the tides written in the almanac.',
].join('\n\n');
